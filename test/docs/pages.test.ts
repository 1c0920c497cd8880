// The README is the front page and docs/ holds the reference, one concept a page. What a reader relies on: the
// quick start is there as written, every relative link and anchor leads somewhere, every page is reachable from the
// README and ships with it, and every sample is in a language a test knows what to do with.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { ToolRegistry } from '../../activities/tool-registry';
import type { Tool } from '../../activities/tool';
import { parseManifest } from '../../runtime/manifest-file';
import { docPages, fencedSamples, fences, headingAnchors, linkTargets, repoRoot } from '../support/doc-pages';
import { testDir } from '../support/env';

/** A link with a scheme (`https:`, `mailto:`) leaves the repository; anything else is a path in it. */
const external = (href: string) => /^[a-z][a-z0-9+.-]*:/i.test(href);

/** The folder `npm run docs` writes the generated API reference to (not committed): a link into it is allowed. */
const typedocOut = (JSON.parse(fs.readFileSync(path.join(repoRoot, 'typedoc.json'), 'utf8')) as { out: string }).out;

/** What is wrong with one relative link of a page, or undefined. */
function brokenLink(page: string, href: string): string | undefined {
  const hash = href.indexOf('#');
  const file = hash < 0 ? href : href.slice(0, hash);
  const anchor = hash < 0 ? undefined : decodeURIComponent(href.slice(hash + 1));
  const target = file === '' ? page : path.posix.normalize(path.posix.join(path.posix.dirname(page), file));
  if (target.startsWith(`${path.posix.normalize(typedocOut)}/`)) return undefined;
  if (target.startsWith('..') || !fs.existsSync(path.join(repoRoot, target))) return `${page}: ${href}: no such file`;
  if (anchor === undefined) return undefined;
  if (!target.endsWith('.md')) return `${page}: ${href}: an anchor into a file that is not Markdown`;
  return headingAnchors(target).has(anchor) ? undefined : `${page}: ${href}: ${target} has no heading #${anchor}`;
}

describe('the README and the docs pages', () => {
  const pages = docPages();

  it('finds the README and the reference pages', () => {
    expect(pages[0]).toBe('README.md');
    for (const page of ['docs/manifest.md', 'docs/identity.md', 'docs/operating-runs.md', 'docs/security.md'])
      expect(pages).toContain(page);
  });

  it('the README is a front page: under 400 lines, with the quick start as written', () => {
    const readme = fs.readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
    expect(readme.split('\n').length).toBeLessThan(400);
    const quickStart = readme.slice(readme.indexOf('## Quick start'));
    const commands = quickStart
      .slice(quickStart.indexOf('```sh\n') + 6, quickStart.indexOf('```', quickStart.indexOf('```sh\n') + 6))
      .split('\n')
      .map((l) => l.split('#')[0]!.trim())
      .filter(Boolean);
    expect(commands).toEqual(['npm install', 'npm start', 'npm test', 'npx toolplane --help']);
    // The scripts those commands run exist.
    const { scripts, bin } = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
      bin: Record<string, string>;
    };
    expect(Object.keys(scripts)).toEqual(expect.arrayContaining(['start', 'test']));
    expect(Object.keys(bin)).toContain('toolplane');
  });

  it("the worked example's manifest declares the README's tool as the worker checks it at start", async () => {
    // The README's tools.ts, loaded from a folder of its own (node_modules linked so it resolves zod as a user's
    // project does), against the README's manifest: the plugin refuses to start on any drift between the two.
    const [toolsTs] = fencedSamples('README.md', 'ts');
    expect(toolsTs).toMatch(/^\/\/ tools\.ts\n/);
    const dir = testDir('readme-example');
    fs.symlinkSync(path.join(repoRoot, 'node_modules'), path.join(dir, 'node_modules'));
    fs.writeFileSync(path.join(dir, 'tools.ts'), toolsTs!);
    const { saveNote } = (await import(path.join(dir, 'tools.ts'))) as { saveNote: Tool };
    const manifests = fencedSamples('README.md', 'yaml');
    expect(manifests).toHaveLength(1);
    const { manifest } = parseManifest(manifests[0]!, 'README.md');
    const registry = new ToolRegistry([saveNote]);
    expect(registry.drift(manifest)).toEqual([]);
    // The check can fail: the same tool against a manifest that declares another input schema.
    const loose = { ...manifest, tools: manifest.tools.map((t) => ({ ...t, input_schema: { type: 'object' } })) };
    expect(registry.drift(loose)).toEqual([
      expect.objectContaining({ toolId: 'tool://notes/save', field: 'input_schema' }),
    ]);
  });

  it('every relative link leads to a file of the repository, and every anchor to a heading of its page', () => {
    const links = pages.flatMap((page) => linkTargets(page).map((href) => ({ page, href })));
    const relative = links.filter((l) => !external(l.href));
    expect(relative.length).toBeGreaterThan(pages.length);
    expect(relative.map((l) => brokenLink(l.page, l.href)).filter(Boolean)).toEqual([]);
  });

  it('a broken link or anchor is found (the check above can fail)', () => {
    expect(brokenLink('README.md', 'docs/no-such-page.md')).toMatch(/no such file/);
    expect(brokenLink('README.md', 'docs/identity.md#no-such-heading')).toMatch(/has no heading/);
    expect(brokenLink('docs/ai-sdk.md', 'identity.md#approvers')).toBeUndefined();
    expect(brokenLink('docs/entry-points.md', 'api/index.html')).toBeUndefined();
  });

  it('the README links every docs page', () => {
    const fromReadme = new Set(
      linkTargets('README.md')
        .filter((href) => !external(href))
        .map((href) => path.posix.normalize(href.split('#')[0]!)),
    );
    expect(pages.filter((page) => !fromReadme.has(page))).toEqual(['README.md']);
  });

  it('every page ships in the package beside the README', () => {
    const packed = JSON.parse(
      execFileSync('npm', ['pack', '--dry-run', '--ignore-scripts', '--json'], { cwd: repoRoot, encoding: 'utf8' }),
    ) as { files: { path: string }[] }[];
    expect(packed[0]!.files.map((f) => f.path)).toEqual(expect.arrayContaining(pages));
  });

  it('every sample is in a language the tests know: ts compiles (test/package), typescript is a fragment', () => {
    // ts: type-checked against the installed package; yaml: complete manifests through the parser and the schema
    // (test/catalog/manifest-schema.test.ts); the rest are commands, output and fragments for the reader.
    const known = new Set(['ts', 'typescript', 'yaml', 'sh', 'text', 'json', '']);
    const unknown = pages.flatMap((page) =>
      fences(page)
        .filter((f) => !known.has(f.lang))
        .map((f) => `${page}: \`\`\`${f.lang}`),
    );
    expect(unknown).toEqual([]);
  });

  it('every YAML sample is YAML', () => {
    const yaml = pages.flatMap((page) =>
      fences(page)
        .filter((f) => f.lang === 'yaml')
        .map((f) => ({ page, ...f })),
    );
    expect(yaml.length).toBeGreaterThanOrEqual(pages.length / 2);
    for (const sample of yaml) expect(() => parse(sample.content)).not.toThrow();
  });
});
