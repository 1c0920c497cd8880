// The canonical JSON the gate counts a call's egress by is the one the effect key hashes: written once,
// with whether it is all ASCII, so its UTF-8 length needs no second scan. Both must hold for any arguments.
import fc from 'fast-check';
import { canonicalJson, sizedCanonicalJson } from '../../catalog/digest';
import { argumentBytes, outboundAndJson } from '../../workflows/gate/outbound';
import type { ToolDecl } from '../../catalog/manifest';

const utf8 = (text: string) => new TextEncoder().encode(text).length;
const text = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary' }),
  fc.string({ unit: fc.constantFrom('a', 'é', '€', '😀', '\ud800', '"', '\\', '\n', '\u007f', '\u0080') }),
);
// JSON has no non-finite number (canonicalize refuses one).
const scalar = fc.oneof(
  text,
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
);
const args = fc.oneof(
  fc.dictionary(text, scalar),
  fc.dictionary(text, fc.oneof(scalar, fc.array(scalar), fc.dictionary(text, scalar))),
);

describe('the canonical JSON of a call', () => {
  it('is canonicalJson, and says ASCII only of text whose UTF-8 length is its length', () => {
    fc.assert(
      fc.property(args, (value) => {
        const sized = sizedCanonicalJson(value);
        expect(sized.json).toBe(canonicalJson(value));
        if (sized.ascii) expect(utf8(sized.json)).toBe(sized.json.length);
      }),
      { numRuns: 3000 },
    );
  });

  it('says ASCII of the usual flat arguments, and not of one holding any other character', () => {
    expect(sizedCanonicalJson({ account_id: 'acct_1', amount_cents: 2500, ok: true, note: null }).ascii).toBe(true);
    expect(sizedCanonicalJson({ to: 'zoë@example.com' }).ascii).toBe(false);
    expect(sizedCanonicalJson({ grüße: 1 }).ascii).toBe(false);
    expect(sizedCanonicalJson({ body: 'line\n"two"' }).ascii).toBe(false);
    expect(sizedCanonicalJson({ nested: { a: 1 } }).ascii).toBe(false);
  });

  it('counts the bytes the provider receives: the UTF-8 of the canonical JSON', () => {
    const decl = { egress: { destination: 'payments.example', max_bytes_per_run: 1 } } as unknown as ToolDecl;
    fc.assert(
      fc.property(fc.dictionary(text, scalar), (value) => {
        const { outbound, written } = outboundAndJson(decl, value, 0);
        expect(outbound.argumentBytes).toBe(utf8(canonicalJson(value)));
        expect(outbound.argumentBytes).toBe(argumentBytes(value));
        expect(written).toEqual({ of: value, json: canonicalJson(value) });
      }),
      { numRuns: 2000 },
    );
  });
});
