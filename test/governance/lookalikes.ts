// Look-alikes of an identifier: strings that normalise (NFKC, case, whitespace) to it but are other bytes.
export type LookAlike = 'full-width' | 'mathematical bold' | 'circled' | 'byte-order mark' | 'case';

const shift = (c: string, base: number, from: string) =>
  String.fromCodePoint(base + c.charCodeAt(0) - from.charCodeAt(0));

function mapChars(v: string, f: (c: string) => string): string {
  return [...v].map(f).join('');
}

export const LOOK_ALIKES: Record<LookAlike, (v: string) => string> = {
  'full-width': (v) => mapChars(v, (c) => (c >= '!' && c <= '~' ? String.fromCharCode(c.charCodeAt(0) + 0xfee0) : c)),
  'mathematical bold': (v) =>
    mapChars(v, (c) =>
      /[0-9]/.test(c)
        ? shift(c, 0x1d7ce, '0')
        : /[A-Z]/.test(c)
          ? shift(c, 0x1d400, 'A')
          : /[a-z]/.test(c)
            ? shift(c, 0x1d41a, 'a')
            : c,
    ),
  circled: (v) =>
    mapChars(v, (c) =>
      c === '0'
        ? '\u24ea'
        : /[1-9]/.test(c)
          ? shift(c, 0x2460, '1')
          : /[A-Z]/.test(c)
            ? shift(c, 0x24b6, 'A')
            : /[a-z]/.test(c)
              ? shift(c, 0x24d0, 'a')
              : c,
    ),
  'byte-order mark': (v) => `\ufeff${v}`,
  case: (v) => (v === v.toUpperCase() ? v.toLowerCase() : v.toUpperCase()),
};
