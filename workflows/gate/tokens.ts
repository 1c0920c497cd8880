// Workflow-safe: the values a piece of text offers the provenance index, each in the normal form
// it is matched by (so a model that retypes a value does not shed its origin).
import { foldText } from '../../catalog/fold';

export function normalize(value: string | number): string {
  if (typeof value !== 'string') return foldText(value);
  // Printable ASCII and spaces (most words a model writes: a memo, a name) is its own NFKC form, and
  // its only whitespace is the space: lower case without spaces is `foldText`'s answer, without the
  // normalisation and the regular expression it takes for any other text.
  let spaces = false;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c === 0x20) spaces = true;
    else if (c < 0x20 || c >= 0x7f) return foldText(value);
  }
  const lower = value.toLowerCase();
  return spaces ? lower.replace(/ /g, '') : lower;
}

const TOKEN_SPLIT = /[\s,;!?()[\]{}<>"'`|*]+/;

const SPLITS = /[\s,;!?()[\]{}<>"'`|*“]/;
const QUOTED = /"([^"]{1,200})"|“([^”]{1,200})”/g;
const EDGE_PUNCTUATION = /^[.:]+|[.:]+$/g;
const AMOUNT = /^(\d+)(?:[.,](\d{1,2}))?$/;
const isEdgePunctuation = (c: number) => c === 0x2e || c === 0x3a; // . :
const isDigit = (c: number) => c >= 0x30 && c <= 0x39;

/** One word, nothing to trim, no amount, no quote (an id, an address, a status): the text offers itself only. */
export function isOneToken(text: string): boolean {
  const first = text.charCodeAt(0);
  return (
    !isEdgePunctuation(first) &&
    !isDigit(first) &&
    !isEdgePunctuation(text.charCodeAt(text.length - 1)) &&
    !SPLITS.test(text)
  );
}

/** The values a piece of text offers: the whole text, its words, and amounts also in minor units. */
export function tokens(text: string): string[] {
  if (isOneToken(text)) return [text];
  const out = new Set<string>([text]);
  // A quoted phrase is a value the writer meant as one.
  if (text.includes('"') || text.includes('“')) for (const m of text.matchAll(QUOTED)) out.add((m[1] ?? m[2])!);
  for (let t of text.split(TOKEN_SPLIT)) {
    if (t && (isEdgePunctuation(t.charCodeAt(0)) || isEdgePunctuation(t.charCodeAt(t.length - 1))))
      t = t.replace(EDGE_PUNCTUATION, '');
    if (!t) continue;
    out.add(t);
    const amount = isDigit(t.charCodeAt(0)) ? AMOUNT.exec(t) : null;
    if (amount) {
      const minor = Number(amount[1]) * 100 + Number((amount[2] ?? '0').padEnd(2, '0'));
      out.add(String(minor));
      out.add(String(Number(amount[1])));
    }
  }
  return [...out];
}
