// The README and the reference pages in docs/, read the way a Markdown renderer reads them (markdown-it, GitHub's
// heading slugs): their fenced samples, their links and the anchors their headings make. The tests that check the
// README's samples check every page's through this, and say per page how many samples they expect to find.
import fs from 'node:fs';
import path from 'node:path';
import GithubSlugger from 'github-slugger';
import MarkdownIt from 'markdown-it';

export const repoRoot = path.resolve(__dirname, '..', '..');

const markdown = new MarkdownIt({ html: true });
type Token = ReturnType<MarkdownIt['parse']>[number];

/** README.md and every docs/*.md, as paths relative to the repository root. */
export function docPages(): string[] {
  const docs = fs
    .readdirSync(path.join(repoRoot, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`);
  return ['README.md', ...docs];
}

function tokens(page: string): Token[] {
  return markdown.parse(fs.readFileSync(path.join(repoRoot, page), 'utf8'), {});
}

/** A page's fenced code blocks: the info string's language (`ts`, `yaml`, ..., `''` for none) and the content. */
export function fences(page: string): { lang: string; content: string }[] {
  return tokens(page)
    .filter((t) => t.type === 'fence')
    .map((t) => ({ lang: t.info.trim(), content: t.content }));
}

/** The contents of a page's fenced code blocks whose info string is exactly `lang`. */
export function fencedSamples(page: string, lang: string): string[] {
  return fences(page)
    .filter((f) => f.lang === lang)
    .map((f) => f.content);
}

/** Every link target in a page (inline links and autolinks), in order. */
export function linkTargets(page: string): string[] {
  return tokens(page)
    .flatMap((t) => t.children ?? [])
    .filter((t) => t.type === 'link_open')
    .map((t) => t.attrGet('href') ?? '');
}

/** The anchors a page's headings make on GitHub (duplicates numbered as GitHub numbers them). */
export function headingAnchors(page: string): Set<string> {
  const slugger = new GithubSlugger();
  const all = tokens(page);
  const anchors = new Set<string>();
  all.forEach((t, i) => {
    if (t.type !== 'heading_open') return;
    // The heading's text as rendered: code spans without their backticks, links by their text.
    const text = (all[i + 1]?.children ?? [])
      .filter((c) => c.type === 'text' || c.type === 'code_inline')
      .map((c) => c.content)
      .join('');
    anchors.add(slugger.slug(text));
  });
  return anchors;
}
