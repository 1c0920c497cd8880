/**
 * The governed call's own CPU cost, without a server: the gate (limits, data flow, trust of the
 * call), the effect key and the provenance update of its result, after N prior tool results, each
 * step as agentRun runs it.
 *
 *   npx tsx bench/gate.ts [--json] [--sizes 10,1000,10000]     (also part of `npm run bench`)
 *
 * How it measures, so that a figure says what its size says:
 * - every size runs in a process of its own (this file with `--size N`), so one size's heap, compiled
 *   code and deoptimisations do not carry into the next;
 * - the calls come in batches, each on a run whose provenance holds exactly N prior results when it
 *   starts and at most 2% more when it ends (one call a batch below 50 results): the bench's own
 *   results do not grow the run under the figure (they used to add 12,000 to every size);
 * - a run is built just before its batch, and a full GC follows every 5,000 results built, all
 *   untimed: the timed calls pay for collecting their own garbage, not for building the state (a
 *   run built long before its calls would also pay cache misses a live run does not);
 * - 4,000 calls of warm-up, then 100 samples of 100 calls; a sample's cost is the process's CPU time
 *   (with single-threaded GC), so time the machine gives other processes is not charged to it; the
 *   figure is the median over samples, with the quartiles and the mean beside it. The steps share a
 *   sample's CPU time as they shared its wall time.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { loadManifest } from '../runtime/manifest-file';
import { ALLOW_ALL } from '../catalog/policy';
import { ToolCall } from '../catalog/tool-call';
import { ToolCatalog } from '../catalog/tool-catalog';
import { effectKey } from '../common/effect-key';
import { governanceGate } from '../workflows/gate/governance';
import { Budget } from '../workflows/gate/limits';
import { Provenance, USER_PROMPT } from '../workflows/gate/provenance';
import { produceToolOutput } from '../workflows/gate/tool-output-labels';

export interface GateFigures {
  priorResults: number;
  /** Median over samples (of 100 calls) of the CPU µs per call: gate + effect key + provenance update. */
  microsPerCall: number;
  gateMicros: number;
  effectKeyMicros: number;
  produceMicros: number;
  /** The mean per call over every sample (GC pauses in any sample included). */
  meanMicros?: number;
  /** The first and third quartiles of the samples' means: the spread behind the median. */
  quartileMicros?: [number, number];
  /** Calls per batch: each batch starts from a run of exactly `priorResults` results. */
  batch?: number;
}

const CRM = 'tool://crm/lookup_customer';
const REFUND = 'tool://payments/refund';
export const SIZES = [10, 1_000, 10_000];
/** Results built between two full collections (untimed): a run of 10,000 is settled before it is measured. */
const COLLECT_RESULTS = 5_000;

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * q))]!;
}
const median = (xs: number[]) => quantile(xs, 0.5);

/** A full collection, when the process can ask for one (`--expose-gc` set here before first use). */
const collect: () => void = (() => {
  const exposed = (globalThis as { gc?: unknown }).gc;
  if (typeof exposed === 'function') return () => (exposed as () => void)();
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as unknown;
  return typeof gc === 'function' ? () => (gc as () => void)() : () => {};
})();

/**
 * CPU time of this process, in µs (`getrusage`, exact to the µs, unlike the per-thread schedstat,
 * which the kernel updates once a tick): time the machine gives other processes is not charged to a
 * sample. Children run with `--single-threaded-gc`, so a collection's work is the main thread's, in
 * the sample it interrupts, not a background thread's in whichever sample it overlaps.
 */
function cpuMicros(): number {
  const u = process.cpuUsage();
  return u.user + u.system;
}

function setting() {
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
  const offer = catalog.offered(ALLOW_ALL).find((o) => o.toolId === REFUND);
  const crmSensitivity = catalog.declared(CRM)!.decl.sensitivity.output;
  const refundSensitivity = catalog.declared(REFUND)!.decl.sensitivity.output;
  // The run's ticket, as agentRun hands its step's own to every call's gate (not one made per call).
  const ticket = { identity: { principal: 'agent:bench', groups: [] }, permits: {}, carry: '' };
  return { catalog, offer, crmSensitivity, refundSensitivity, ticket };
}

type Setting = ReturnType<typeof setting>;

interface Run {
  provenance: Provenance;
  budget: Budget;
}

/** One run after the user's prompt and `prior` CRM results, each naming an account. */
function runAfter(s: Setting, prior: number): Run {
  const provenance = new Provenance();
  provenance.produce('Refund every customer 25.00 EUR for the outage.', {
    source: USER_PROMPT,
    trusted: true,
    callTrusted: true,
    sensitivity: 'internal',
  });
  for (let i = 0; i < prior; i++)
    produceToolOutput(provenance, {
      toolId: CRM,
      output: { email: `c${i}@example.com`, account_id: `acct_${i}`, name: `Customer ${i}` },
      callTrusted: true,
      origins: [],
      sensitivity: s.crmSensitivity,
    });
  return { provenance, budget: new Budget({}, 0) };
}

/**
 * Governed refunds of accounts the CRM returned, as agentRun makes them: `warmup` calls, then
 * `samples` samples of `sampleCalls` calls each. Calls come in batches, each on a run of exactly
 * `prior` results built before it (untimed).
 */
export function gateBench(prior: number, samples = 100, sampleCalls = 100, warmup = 4000): GateFigures {
  const s = setting();
  const batch = Math.max(1, Math.ceil(prior / 50));
  // A run is built just before its batch (untimed), and collected after every COLLECT_RESULTS built.
  let sinceCollect = 0;
  let run: Run | undefined;
  let onRun = batch;
  const runOf = (): Run => {
    if (onRun < batch) return (onRun++, run!);
    run = runAfter(s, prior);
    sinceCollect += prior + 1;
    if (sinceCollect >= COLLECT_RESULTS) {
      collect();
      sinceCollect = 0;
    }
    onRun = 1;
    return run;
  };

  const per = { gate: [] as number[], key: [] as number[], produce: [] as number[], cpu: [] as number[] };
  const total = { cpuMicros: 0, calls: 0 };
  let c = 0;
  for (let sample = -Math.ceil(warmup / sampleCalls); sample < samples; sample++) {
    // The sample's calls and their runs, prepared before it (untimed): building runs is not the gate's work.
    const planned = Array.from({ length: sampleCalls }, () => {
      const run = runOf();
      const i = (c * 7919) % Math.max(prior, 1);
      const call = ToolCall.prepare(s.catalog, REFUND, {
        account_id: `acct_${i}`,
        amount_cents: 2500,
        currency: 'EUR',
        // Words the model wrote itself: labelled with everything it had read.
        memo: `outage refund ${c}`,
      });
      return { run, call, position: prior + onRun - 1, refundId: `rf_${c++}` };
    });
    let gateNs = 0n;
    let keyNs = 0n;
    let produceNs = 0n;
    const cpu0 = cpuMicros();
    for (const { run, call, position, refundId } of planned) {
      let callTrusted = false;
      const t0 = process.hrtime.bigint();
      const verdict = governanceGate({
        principal: 'agent:bench',
        ticket: s.ticket,
        offer: s.offer,
        budget: run.budget,
        provenance: run.provenance.snapshot(),
        onAllowed: (t) => (callTrusted = t),
      })(call);
      if (verdict instanceof Promise) throw new Error('a refund carries nothing: the gate decides it at once');
      verdict.charge?.();
      const t1 = process.hrtime.bigint();
      if (prior > 0 && !verdict.allow) throw new Error(`the bench's refund was refused: ${verdict.reason}`);
      effectKey({ tool: REFUND, args: verdict.allow ? verdict.args : call.args }, position, verdict.written);
      const t2 = process.hrtime.bigint();
      produceToolOutput(run.provenance, {
        toolId: REFUND,
        output: { refund_id: refundId, status: 'refunded' },
        callTrusted,
        origins: [],
        sensitivity: s.refundSensitivity,
      });
      const t3 = process.hrtime.bigint();
      gateNs += t1 - t0;
      keyNs += t2 - t1;
      produceNs += t3 - t2;
    }
    const cpu = cpuMicros() - cpu0;
    if (sample < 0) continue; // warm-up
    // The sample's CPU time shared between the steps as their wall time was (which is per step; the CPU clock is not).
    const wall = Number(gateNs + keyNs + produceNs);
    const share = (ns: bigint) => (cpu * Number(ns)) / wall / sampleCalls;
    per.gate.push(share(gateNs));
    per.key.push(share(keyNs));
    per.produce.push(share(produceNs));
    per.cpu.push(cpu / sampleCalls);
    total.cpuMicros += cpu;
    total.calls += sampleCalls;
  }
  return {
    priorResults: prior,
    microsPerCall: median(per.cpu),
    gateMicros: median(per.gate),
    effectKeyMicros: median(per.key),
    produceMicros: median(per.produce),
    meanMicros: total.cpuMicros / total.calls,
    quartileMicros: [quantile(per.cpu, 0.25), quantile(per.cpu, 0.75)],
    batch,
  };
}

/** Each size in a fresh process of its own (this file with `--size`), one after the other. */
export function gateBenches(sizes = SIZES): GateFigures[] {
  return sizes.map((prior) => {
    const flags = ['--expose-gc', '--single-threaded-gc'];
    const out = execFileSync(process.execPath, [...flags, ...process.execArgv, __filename, '--size', String(prior)], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    return JSON.parse(out) as GateFigures;
  });
}

function argValue(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i < 0 ? undefined : process.argv[i + 1];
}

if (require.main === module) {
  try {
    const size = argValue('--size');
    if (size !== undefined) {
      process.stdout.write(JSON.stringify(gateBench(Number(size))));
    } else {
      const rows = gateBenches(argValue('--sizes')?.split(',').map(Number));
      if (process.argv.includes('--json')) process.stdout.write(JSON.stringify(rows));
      else
        for (const r of rows)
          console.log(
            `${String(r.priorResults).padStart(6)} prior results: ${r.microsPerCall.toFixed(1)} µs per call (gate ${r.gateMicros.toFixed(1)}, effect key ${r.effectKeyMicros.toFixed(1)}, provenance ${r.produceMicros.toFixed(1)}; quartiles ${r.quartileMicros?.map((x) => x.toFixed(1)).join('-')}, mean ${r.meanMicros?.toFixed(1)})`,
          );
    }
  } catch (err) {
    console.error(err);
    process.exit(1);
  }
}
