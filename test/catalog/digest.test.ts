import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { digestOf, manifestDigest, toolDigest } from '../../catalog/digest';
import { ToolDecl } from '../../catalog/manifest';
import { exampleManifest } from '../support/env';

/** Rebuilds every object with its keys in another order. */
function reorder(value: unknown, pick: (n: number) => number): unknown {
  if (Array.isArray(value)) return value.map((v) => reorder(v, pick));
  if (value && typeof value === 'object') {
    const entries = Object.entries(value);
    const shuffled: [string, unknown][] = [];
    while (entries.length) shuffled.push(entries.splice(pick(entries.length), 1)[0]!);
    return Object.fromEntries(shuffled.map(([k, v]) => [k, reorder(v, pick)]));
  }
  return value;
}

const parameter = fc.record({
  name: fc.stringMatching(/^[a-z][a-z_]{0,10}$/),
  description: fc.string({ maxLength: 40 }),
  enum: fc.uniqueArray(fc.string({ minLength: 1, maxLength: 8 }), { minLength: 1, maxLength: 4 }),
});

const toolArb = fc
  .record({
    params: fc.uniqueArray(parameter, { minLength: 1, maxLength: 4, selector: (p) => p.name }),
    description: fc.string({ minLength: 1, maxLength: 60 }),
    hint: fc.boolean(),
    safety: fc.constantFrom('read_only', 'idempotent', 'mutating'),
  })
  .map(({ params, description, hint, safety }) =>
    ToolDecl.parse({
      id: 'tool://svc/t',
      description,
      input_schema: {
        type: 'object',
        properties: Object.fromEntries(
          params.map((p) => [
            p.name,
            { type: 'object', properties: { inner: { type: 'string', description: p.description, enum: p.enum } } },
          ]),
        ),
      },
      annotations: { readOnlyHint: hint },
      safety,
      recovery: safety === 'read_only' ? 'retry' : 'reconcile',
    }),
  );

describe('digests', () => {
  it('match the committed snapshot for the example manifest', () => {
    const m = exampleManifest();
    const snapshot = JSON.parse(
      fs.readFileSync(path.resolve(__dirname, '..', 'fixtures', 'example-digests.json'), 'utf8'),
    );
    expect({
      manifest: manifestDigest(m),
      tools: Object.fromEntries(m.tools.map((t) => [t.id, toolDigest(t)])),
    }).toEqual(snapshot);
  });

  it('do not change when keys are reordered, at any depth', () => {
    fc.assert(
      fc.property(toolArb, fc.infiniteStream(fc.nat()), (decl, picks) => {
        const it = picks[Symbol.iterator]();
        const shuffled = reorder(decl, (n) => it.next().value % n) as ToolDecl;
        expect(toolDigest(shuffled)).toBe(toolDigest(decl));
      }),
      { numRuns: 200 },
    );
  });

  it('change with a nested parameter description', () => {
    fc.assert(
      fc.property(toolArb, fc.string({ minLength: 1, maxLength: 10 }), (decl, extra) => {
        const changed = structuredClone(decl);
        const props = changed.input_schema.properties as Record<
          string,
          { properties: { inner: { description: string } } }
        >;
        const first = Object.values(props)[0]!;
        first.properties.inner.description += extra;
        expect(toolDigest(changed)).not.toBe(toolDigest(decl));
      }),
      { numRuns: 200 },
    );
  });

  it('change with an enum value', () => {
    fc.assert(
      fc.property(toolArb, fc.string({ minLength: 1, maxLength: 8 }), (decl, value) => {
        const changed = structuredClone(decl);
        const inner = (
          Object.values(changed.input_schema.properties as object)[0] as { properties: { inner: { enum: string[] } } }
        ).properties.inner;
        fc.pre(!inner.enum.includes(value));
        inner.enum[inner.enum.length - 1] = value;
        expect(toolDigest(changed)).not.toBe(toolDigest(decl));
      }),
      { numRuns: 200 },
    );
  });

  it('change with an annotation, the safety class or a rule', () => {
    fc.assert(
      fc.property(toolArb, (decl) => {
        const flipped = { ...decl, annotations: { readOnlyHint: !decl.annotations!.readOnlyHint } };
        expect(toolDigest(flipped)).not.toBe(toolDigest(decl));
        expect(toolDigest({ ...decl, approval: 'always' })).not.toBe(toolDigest(decl));
        expect(toolDigest({ ...decl, retries_landed: !decl.retries_landed })).not.toBe(toolDigest(decl));
      }),
      { numRuns: 100 },
    );
  });

  it('of the manifest change when any tool changes, and not when tools are listed in another order', () => {
    const m = exampleManifest();
    const reversed = { ...m, tools: [...m.tools].reverse() };
    expect(manifestDigest(reversed)).toBe(manifestDigest(m));
    const edited = { ...m, tools: m.tools.map((t, i) => (i === 2 ? { ...t, description: `${t.description} ` } : t)) };
    expect(manifestDigest(edited)).not.toBe(manifestDigest(m));
  });

  it('are RFC 8785 canonical: numbers and unicode keys have one spelling', () => {
    expect(digestOf({ b: 1.0, a: 'é' })).toBe(digestOf({ a: 'é', b: 1 }));
  });
});
