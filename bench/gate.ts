/**
 * The governed call's own CPU cost, without a server: the gate (limits, data flow, trust of the
 * call), the effect key and the provenance update of its result, after N prior tool results.
 *
 *   npx tsx bench/gate.ts            (also part of `npm run bench`)
 */
import path from 'node:path';
import { loadManifest } from '../runtime/manifest-file';
import { ALLOW_ALL } from '../catalog/policy';
import { ToolCall } from '../catalog/tool-call';
import { ToolCatalog } from '../catalog/tool-catalog';
import { effectKey } from '../common/effect-key';
import { governanceGate } from '../workflows/gate/governance';
import { Budget } from '../workflows/gate/limits';
import { Provenance, USER_PROMPT } from '../workflows/gate/provenance';

export interface GateFigures {
  priorResults: number;
  /** Median over rounds of the mean per call: gate + effect key + provenance update. */
  microsPerCall: number;
  gateMicros: number;
  effectKeyMicros: number;
  produceMicros: number;
}

const CRM = 'tool://crm/lookup_customer';
const REFUND = 'tool://payments/refund';

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** One run's state after `prior` CRM results, then governed refunds of one of them, as agentRun makes them. */
export async function gateBench(
  prior: number,
  calls = 2000,
  rounds = 5,
  /** The provenance under test (another implementation, to compare). */
  makeProvenance: () => Pick<Provenance, 'produce' | 'snapshot'> = () => new Provenance(),
): Promise<GateFigures> {
  const shipped = loadManifest(path.resolve(__dirname, '..', 'examples', 'support-desk', 'manifest.yaml')).manifest;
  // Room for every refund the bench makes: an egress refusal would end the measurement, not the gate's work.
  const manifest = {
    ...shipped,
    tools: shipped.tools.map((t) => (t.egress ? { ...t, egress: { ...t.egress, max_bytes_per_run: 1e12 } } : t)),
  };
  const catalog = ToolCatalog.fromManifest(
    manifest,
    manifest.tools.map((t) => t.id),
  );
  const offered = catalog.offered(ALLOW_ALL);
  const offer = offered.find((o) => o.toolId === REFUND);
  const crmDecl = catalog.declared(CRM)!.decl;
  const prov = makeProvenance();
  prov.produce('Refund every customer 25.00 EUR for the outage.', {
    source: USER_PROMPT,
    trusted: true,
    callTrusted: true,
    sensitivity: 'internal',
  });
  const result = (i: number) => ({ email: `c${i}@example.com`, account_id: `acct_${i}`, name: `Customer ${i}` });
  const crm = { source: CRM, trusted: false, callTrusted: true, sensitivity: crmDecl.sensitivity.output };
  for (let i = 0; i < prior; i++) prov.produce(result(i), crm);
  const budget = new Budget({}, 0);

  const per = { gate: [] as number[], key: [] as number[], produce: [] as number[], all: [] as number[] };
  for (let r = 0; r < rounds + 1; r++) {
    let gateNs = 0n;
    let keyNs = 0n;
    let produceNs = 0n;
    for (let c = 0; c < calls; c++) {
      const i = (c * 7919) % Math.max(prior, 1);
      const call = ToolCall.prepare(catalog, REFUND, {
        account_id: `acct_${i}`,
        amount_cents: 2500,
        currency: 'EUR',
        // Words the model wrote itself: labelled with everything it had read.
        memo: `outage refund ${r}-${c}`,
      });
      const seen = prov.snapshot();
      const t0 = process.hrtime.bigint();
      const verdict = await governanceGate({
        principal: 'agent:bench',
        ticket: { identity: { principal: 'agent:bench', groups: [] }, permits: {}, carry: '' },
        offer,
        budget,
        provenance: seen,
        onAllowed: () => {},
      })(call);
      verdict.charge?.();
      const t1 = process.hrtime.bigint();
      if (prior > 0 && !verdict.allow) throw new Error(`the bench's refund was refused: ${verdict.reason}`);
      effectKey({ tool: REFUND, args: verdict.allow ? verdict.args : call.args }, prior + c);
      const t2 = process.hrtime.bigint();
      prov.produce({ refund_id: `rf_${r}_${c}`, status: 'refunded' }, { ...crm, source: REFUND });
      const t3 = process.hrtime.bigint();
      gateNs += t1 - t0;
      keyNs += t2 - t1;
      produceNs += t3 - t2;
    }
    if (r === 0) continue; // warm-up
    const us = (ns: bigint) => Number(ns) / 1000 / calls;
    per.gate.push(us(gateNs));
    per.key.push(us(keyNs));
    per.produce.push(us(produceNs));
    per.all.push(us(gateNs + keyNs + produceNs));
  }
  return {
    priorResults: prior,
    microsPerCall: median(per.all),
    gateMicros: median(per.gate),
    effectKeyMicros: median(per.key),
    produceMicros: median(per.produce),
  };
}

export async function gateBenches(): Promise<GateFigures[]> {
  // Discarded: compiles the hot path first, so the first figures (10 prior results) do not pay for
  // it alone; each bench still has its own warm-up round.
  await gateBench(1_000, 2000, 1);
  const out: GateFigures[] = [];
  for (const prior of [10, 1_000, 10_000]) out.push(await gateBench(prior));
  return out;
}

if (require.main === module) {
  gateBenches()
    .then((rows) => {
      if (process.argv.includes('--json')) return void process.stdout.write(JSON.stringify(rows));
      for (const r of rows)
        console.log(
          `${String(r.priorResults).padStart(6)} prior results: ${r.microsPerCall.toFixed(1)} µs per call (gate ${r.gateMicros.toFixed(1)}, effect key ${r.effectKeyMicros.toFixed(1)}, provenance ${r.produceMicros.toFixed(1)})`,
        );
    })
    .catch((err) => {
      console.error(err);
      process.exit(1);
    });
}
