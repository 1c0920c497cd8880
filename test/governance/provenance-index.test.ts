// The indexed provenance decides exactly as the old full scan did: same labels, same productions,
// same data-flow verdicts, at every snapshot; and a continued run's restored provenance too.
import path from 'node:path';
import fc from 'fast-check';
import { loadManifest } from '../../runtime/manifest-file';
import type { Sensitivity, ToolDecl } from '../../catalog/manifest';
import {
  Provenance,
  USER_PROMPT,
  type Production,
  type ProvenanceView,
  type Sighting,
} from '../../workflows/gate/provenance';
import { leaves } from '../../common/json-leaves';
import { checkDataFlow } from '../../workflows/gate/taint-gate';
import { ATTACKS, CONTROLS } from './scenarios';
import { ScanProvenance } from './scan-provenance';

const examples = path.resolve(__dirname, '..', '..', 'examples');
const decls: ToolDecl[] = ['banking', 'workspace', 'support-desk'].flatMap(
  (w) => loadManifest(path.join(examples, w, 'manifest.yaml')).manifest.tools,
);

// The values the injection scenarios use, and look-alikes a model retyping them would write.
const scenarioArgs: unknown[] = [
  ...ATTACKS.flatMap((a) => [a.prompt, ...[...a.setup.flat(), ...a.attack].map((c) => c.arguments)]),
  ...CONTROLS.flatMap((c) => [c.prompt, ...c.turns.flat().map((t) => t.arguments)]),
];
const scenarioValues = [
  ...new Set(
    scenarioArgs
      .flatMap((x) => leaves(x).map((l) => l.value))
      .filter((v): v is string | number => typeof v === 'string' || typeof v === 'number'),
  ),
];
const lookalikes = scenarioValues.flatMap((v) => (typeof v === 'string' ? [v.toUpperCase(), ` ${v} `] : [String(v)]));
const pool = [...scenarioValues, ...lookalikes, '25.00', '2500', 'refund 25.00 EUR to "Alice Smith"'];

// Labels are compared on a sample; verdicts cover every declaration.
const probes = pool.filter((_, i) => i % 5 === 0);
const sources = [USER_PROMPT, ...new Set(decls.map((d) => d.id))];
const levels: Sensitivity[] = ['public', 'internal', 'confidential', 'secret'];

const production: fc.Arbitrary<Production> = fc.record({
  source: fc.constantFrom(...sources),
  trusted: fc.boolean(),
  callTrusted: fc.boolean(),
  sensitivity: fc.constantFrom(...levels),
});
const value = fc.constantFrom(...pool);
const output = fc.oneof(
  value,
  fc.dictionary(fc.constantFrom('recipient', 'account_id', 'to', 'body', 'amount_cents', 'iban'), value, {
    maxKeys: 3,
  }),
  fc.array(value, { maxLength: 3 }),
);
const ops = fc.array(
  fc.oneof(
    { weight: 5, arbitrary: fc.record({ op: fc.constant('produce' as const), value: output, p: production }) },
    { weight: 2, arbitrary: fc.constant({ op: 'snapshot' as const }) },
    {
      weight: 1,
      arbitrary: fc.record({
        op: fc.constant('sent' as const),
        source: fc.constantFrom(...sources),
        values: fc.array(fc.constantFrom(...pool.map(String)), { maxLength: 2 }),
      }),
    },
  ),
  { maxLength: 40 },
);
/** Arguments for a declaration: its own fields, filled from the pool. */
function argsFor(decl: ToolDecl, pick: (i: number) => string | number): Record<string, unknown> {
  const props = Object.keys((decl.input_schema as { properties?: Record<string, unknown> }).properties ?? {});
  return Object.fromEntries(props.map((k, i) => [k, pick(i)]));
}

/** The first of each repeated sighting: what the index keeps (a repeat tells no view anything new). */
function distinct(xs: readonly Sighting[]): Sighting[] {
  const seen = new Set<string>();
  return xs.filter((s) => {
    const sig = JSON.stringify([s.source, s.trusted, s.callTrusted, s.echo, s.sensitivity, s.exact]);
    if (seen.has(sig)) return false;
    seen.add(sig);
    return true;
  });
}

function sameDecisions(a: ProvenanceView, b: ProvenanceView, picks: number[]): void {
  expect(a.contextLabel()).toEqual(b.contextLabel());
  for (const v of probes) {
    expect(a.labelOf(v)).toEqual(b.labelOf(v));
    expect(a.productionsOf(v)).toEqual(distinct(b.productionsOf(v)));
  }
  for (const [n, decl] of decls.entries()) {
    const args = argsFor(decl, (i) => pool[(picks[(n + i) % picks.length] ?? 0) % pool.length]!);
    expect(checkDataFlow(decl, args, a)).toEqual(checkDataFlow(decl, args, b));
    expect(a.callTrusted(args)).toBe(b.callTrusted(args));
  }
}

describe('the provenance index', () => {
  it('labels every value, and decides every call, exactly as a full scan of the productions', () => {
    fc.assert(
      fc.property(ops, fc.array(fc.nat(), { minLength: 1, maxLength: 8 }), (script, picks) => {
        const indexed = new Provenance();
        const scan = new ScanProvenance();
        const views: [ProvenanceView, ProvenanceView][] = [];
        for (const o of script) {
          if (o.op === 'produce') {
            indexed.produce(o.value, o.p);
            scan.produce(o.value, o.p);
          } else if (o.op === 'snapshot') views.push([indexed.snapshot(), scan.snapshot()]);
          else {
            indexed.noteSent(o.source, o.values);
            scan.noteSent(o.source, o.values);
          }
        }
        // Older snapshots still see only what came before them.
        for (const [a, b] of views) sameDecisions(a, b, picks);
        sameDecisions(indexed, scan, picks);
        // A continued run starts from the state and decides as the uninterrupted run would.
        const restored = Provenance.restore(JSON.parse(JSON.stringify(indexed.state())));
        sameDecisions(restored.snapshot(), indexed.snapshot(), picks);
        const next = { source: 'tool://bank/find_payee', trusted: false, callTrusted: true, sensitivity: 'internal' };
        restored.produce({ iban: pool[picks[0]! % pool.length] }, next as Production);
        scan.produce({ iban: pool[picks[0]! % pool.length] }, next as Production);
        sameDecisions(restored, scan, picks);
      }),
      { numRuns: 120 },
    );
  });

  it("keeps a continued run's state the size of what is distinct, however often results repeat it", () => {
    const crm = {
      source: 'tool://crm/lookup_customer',
      trusted: false,
      callTrusted: true,
      sensitivity: 'internal' as const,
    };
    const after = (n: number) => {
      const prov = new Provenance();
      for (let i = 0; i < n; i++) prov.produce({ email: 'bob@example.com', account_id: 'acct_bob_002' }, crm);
      return JSON.stringify({ ...prov.state(), count: 0 }).length;
    };
    expect(after(5_000)).toBe(after(5));
  });

  it('refuses a forged state rather than guess', () => {
    expect(() => Provenance.restore({ v: 2 } as never)).toThrow(/version 2/);
    const state = new Provenance().state();
    expect(() => Provenance.restore({ ...state, index: [['x', [[7, 0, 0, 0, 0]]]] })).toThrow(/source #7/);
  });

  it('keeps what a snapshot saw, while thousands of productions arrive after it', () => {
    const prov = new Provenance();
    const crm = {
      source: 'tool://crm/lookup_customer',
      trusted: false,
      callTrusted: true,
      sensitivity: 'internal' as const,
    };
    for (let i = 0; i < 5_000; i++) prov.produce({ id: `r-${i}` }, crm);
    const before = prov.snapshot();
    prov.produce('pay r-42 and r-9999', {
      source: USER_PROMPT,
      trusted: true,
      callTrusted: true,
      sensitivity: 'public',
    });
    for (let i = 5_000; i < 10_000; i++) prov.produce({ id: `r-${i}` }, crm);
    expect(before.labelOf('R-42')).toMatchObject({ trusted: false, sources: ['tool://crm/lookup_customer'] });
    expect(prov.labelOf('R-42')).toMatchObject({ trusted: true, sensitivity: 'public' });
    expect(before.labelOf('r-9999')).toMatchObject({ synthesized: true, trusted: false });
    expect(before.productionsOf('r-7000')).toEqual([]);
    expect(prov.productionsOf('r-7000')).toHaveLength(1);
  });
});
