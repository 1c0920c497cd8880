// Workflow-safe: the principal's words inside a sentence. Any contiguous span of what the principal
// wrote is theirs ("1234 Elm Street" from "update my address: 1234 Elm Street, New York"), bounded by
// anything that is not a letter or digit, so punctuation glued to an address or a URL
// ("www.our-company.com.They") does not hide it.

/** The form spans are compared in: NFKC, lower case, whitespace runs as one space. */
export function spanText(text: string): string {
  return text.normalize('NFKC').toLowerCase().replace(/\s+/g, ' ').trim();
}

const WORD_CHAR = /[\p{L}\p{N}]/u;

const isWordChar = (text: string, i: number): boolean => i >= 0 && i < text.length && WORD_CHAR.test(text[i]!);

/** Whether `value` (already in span form) is a span of `text` (in span form) that starts and ends at a word's edge. */
export function isSpanOf(value: string, text: string): boolean {
  if (value.length < 2 || !WORD_CHAR.test(value)) return false;
  for (let at = text.indexOf(value); at !== -1; at = text.indexOf(value, at + 1)) {
    const startsAtEdge = !isWordChar(value, 0) || !isWordChar(text, at - 1);
    const end = at + value.length;
    const endsAtEdge = !isWordChar(value, value.length - 1) || !isWordChar(text, end);
    if (startsAtEdge && endsAtEdge) return true;
  }
  return false;
}

/** Every string the principal wrote in a value (a request, the strings of a structured input). */
export function textsOf(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') {
    const t = spanText(value);
    if (t) out.push(t);
  } else if (Array.isArray(value)) for (const x of value) textsOf(x, out);
  else if (value !== null && typeof value === 'object')
    for (const x of Object.values(value as Record<string, unknown>)) textsOf(x, out);
  return out;
}
