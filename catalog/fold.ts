// Workflow-safe: the one spelling values are matched by: NFKC, lower case, without whitespace.

/** "  DE89 3704 …" and "de893704…" fold to one text; so do "ＤＡＮ＠partner.example" and "dan@partner.example". */
export function foldText(value: string | number): string {
  const text = String(value);
  // Printable ASCII without whitespace is its own NFKC form with nothing to strip: lower-casing is all
  // that is left (the common case, and the gate's hot path).
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c <= 0x20 || c >= 0x7f) return text.normalize('NFKC').toLowerCase().replace(/\s+/g, '');
  }
  return text.toLowerCase();
}
