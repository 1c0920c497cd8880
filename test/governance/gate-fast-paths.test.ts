// The gate's hot-path helpers give exactly what their plain definitions give: the pointers and
// values of arguments, the normal form a value is matched by, the tokens a text offers, the UTF-8
// size of what leaves, and the SHA-256 every effect key is made of. Labels, verdicts and effect
// keys of recorded runs rest on these.
import { sha256 } from '@noble/hashes/sha256';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils';
import canonicalize from 'canonicalize';
import fc from 'fast-check';
import { canonicalJson, sha256Hex } from '../../catalog/digest';
import { effectKey, type EffectDescriptor } from '../../common/effect-key';
import { argumentBytes, utf8Length } from '../../workflows/gate/outbound';
import { normalize, tokens } from '../../workflows/gate/tokens';
import { leaves, type Leaf } from '../../common/json-leaves';

// The definitions as they read before the fast paths.
function plainLeaves(value: unknown, pointer = ''): Leaf[] {
  if (value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
    return [{ pointer, value }];
  if (Array.isArray(value)) return value.flatMap((v, i) => plainLeaves(v, `${pointer}/${i}`));
  if (typeof value === 'object') {
    return Object.entries(value as Record<string, unknown>).flatMap(([k, v]) =>
      plainLeaves(v, `${pointer}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`),
    );
  }
  return [];
}

const plainNormalize = (value: string | number): string =>
  String(value).normalize('NFKC').toLowerCase().replace(/\s+/g, '');

function plainTokens(text: string): string[] {
  const out = new Set<string>([text]);
  for (const m of text.matchAll(/"([^"]{1,200})"|“([^”]{1,200})”/g)) out.add((m[1] ?? m[2])!);
  for (let t of text.split(/[\s,;!?()[\]{}<>"'`|*]+/)) {
    t = t.replace(/^[.:]+|[.:]+$/g, '');
    if (!t) continue;
    out.add(t);
    const amount = /^(\d+)(?:[.,](\d{1,2}))?$/.exec(t);
    if (amount) {
      const minor = Number(amount[1]) * 100 + Number((amount[2] ?? '0').padEnd(2, '0'));
      out.add(String(minor));
      out.add(String(Number(amount[1])));
    }
  }
  return [...out];
}

// Texts built from the characters the fast paths branch on, beside arbitrary Unicode.
const tricky = fc.constantFrom(
  ...' \t\n.:,;"“”\'0123456789aZ~/_-éＡﬁ\u00a0\u2003\u0130\ud83d\ude00\ud800'.split(''),
  'acct_1',
  '25.00',
  'x@example.com',
);
const text = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 30 }),
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.array(tricky, { maxLength: 12 }).map((xs) => xs.join('')),
);
const json = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    text,
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(text, tie('value'), { maxKeys: 4 }),
  ),
})).value;

describe('the gate hot path', () => {
  it('lists the same leaves, in the same order, with the same pointers', () => {
    fc.assert(
      fc.property(json, (v) => expect(leaves(v)).toEqual(plainLeaves(v))),
      { numRuns: 2000 },
    );
    const sparse = [1, , 3]; // eslint-disable-line no-sparse-arrays
    expect(leaves({ 'a/b~c': sparse, u: undefined })).toEqual(plainLeaves({ 'a/b~c': sparse, u: undefined }));
  });

  it('normalises every value as NFKC, lower case, without whitespace', () => {
    fc.assert(
      fc.property(fc.oneof(text, fc.double(), fc.integer()), (v) => expect(normalize(v)).toBe(plainNormalize(v))),
      { numRuns: 5000 },
    );
  });

  it('offers the same tokens in the same order', () => {
    fc.assert(
      fc.property(text, (t) => expect(tokens(t)).toEqual(plainTokens(t))),
      { numRuns: 5000 },
    );
    for (const t of ['', 'rf_1_2', '.x', 'x:', '12', '“quoted”', 'a"b', 'refund 25.00 EUR to "Alice Smith"'])
      expect(tokens(t)).toEqual(plainTokens(t));
  });

  it('counts the UTF-8 bytes an encoder writes, and hashes the same bytes', () => {
    fc.assert(
      fc.property(text, (t) => {
        expect(utf8Length(t)).toBe(new TextEncoder().encode(t).length);
        expect(sha256Hex(t)).toBe(bytesToHex(sha256(utf8ToBytes(t))));
      }),
      { numRuns: 5000 },
    );
    fc.assert(
      fc.property(json, (v) => expect(argumentBytes(v)).toBe(new TextEncoder().encode(canonicalJson(v)).length)),
      { numRuns: 1000 },
    );
  });
});

const flatValue = fc.oneof(
  text,
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(-0, 1e21, 1e-7, 2 ** 53 + 2, 0.1 + 0.2),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
);

describe('the effect key', () => {
  const plainKey = (descriptor: unknown, position: number) =>
    `ek-${Buffer.from(sha256(utf8ToBytes(canonicalJson({ descriptor, position })))).toString('base64url')}`;

  it('is the hash of the canonical descriptor and position, whatever the descriptor holds', () => {
    const descriptor = fc.oneof(
      fc.record({ tool: text, args: json }),
      fc.record({ args: json, tool: text }),
      fc.record({ tool: text, args: json, extra: json }),
      fc.record({ tool: fc.integer(), args: json }),
      fc.record({ tool: text }),
      // Flat arguments (the one-stringify path), with keys that sort unlike insertion order and values JSON writes apart.
      fc.record({
        tool: text,
        args: fc.dictionary(
          fc.oneof(text, fc.nat().map(String), fc.constantFrom('__proto__', 'toString', 'args', 'tool')),
          flatValue,
          { maxKeys: 8 },
        ),
      }),
    );
    const position = fc.oneof(fc.nat(), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }));
    fc.assert(
      fc.property(descriptor, position, (d, p) => expect(effectKey(d as EffectDescriptor, p)).toBe(plainKey(d, p))),
      { numRuns: 3000 },
    );
    const withJson = { tool: 't', args: { toJSON: () => ({ b: 1, a: [2] }) } };
    expect(effectKey(withJson, 3)).toBe(plainKey(withJson, 3));
    const inherited = Object.assign(Object.create({ extra: 1 }) as object, { tool: 't', args: { a: 1 } });
    expect(effectKey(inherited as EffectDescriptor, 3)).toBe(plainKey(inherited, 3));
  });
});

describe('canonical JSON', () => {
  it('is what the RFC 8785 library writes, for flat arguments and for anything else', () => {
    const scalar = fc.oneof(text, fc.double(), fc.integer(), fc.boolean(), fc.constant(null), fc.constant(undefined));
    const flat = fc.dictionary(text, scalar, { maxKeys: 8 });
    const check = (v: unknown) => {
      let expected: string | undefined;
      try {
        expected = canonicalize(v);
      } catch {
        expect(() => canonicalJson(v)).toThrow();
        return;
      }
      if (expected === undefined) expect(() => canonicalJson(v)).toThrow();
      else expect(canonicalJson(v)).toBe(expected);
    };
    fc.assert(fc.property(fc.oneof(flat, json, fc.anything()), check), { numRuns: 5000 });
    for (const v of [
      new Date(0),
      new String('ab'),
      { toJSON: () => 1, a: 'x' },
      { a: () => 1 },
      { s: Symbol('x') },
      {},
    ])
      check(v);
  });
});
