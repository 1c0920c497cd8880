/**
 * Replay CPU of agentRun beside the hand loop, on histories recorded once and kept on disk, so a
 * change to workflow code is measured against the very same histories (and any change in what they
 * would schedule fails the replay). Measurement only; `npm run bench` holds the goal.
 *
 *   npx tsx bench/replay-cpu.ts --record DIR [--calls 500] [--per-turn 10]
 *     records an N- and an N/2-call run of each side (and a 10-call agentRun) into DIR as JSON
 *   npx tsx bench/replay-cpu.ts --replay DIR [--rounds 5] [--promises] [--cpu-prof]
 *     bundles the workflows as they are now and replays DIR's histories, the sides alternating:
 *     median µs of CPU per call (the bench's method), µs per further call (N minus N/2), and with
 *     --promises the sandbox promises per further call (the SDK's promise hook, counted)
 *   npx tsx bench/replay-cpu.ts --dump DIR
 *     prints the 10-call agentRun's commands in order with their activity inputs (to compare before/after)
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Session } from 'node:inspector/promises';
import v8 from 'node:v8';
import { SourceMapConsumer, type RawSourceMap } from 'source-map-js';
import { Client, Connection } from '@temporalio/client';
import { historyFromJSON, historyToJSON } from '@temporalio/common/lib/proto-utils';
import { temporal } from '@temporalio/proto';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { Command } from 'commander';
import { loadManifest } from '../runtime/manifest-file';
import { benchServer } from './bench-server';
import { benchBundle, benchWorker } from './bench-worker';
import { agentRunInput, benchManifest, chainOf } from './long';

type Event = temporal.api.history.v1.IHistoryEvent;
type PromiseHooks = Parameters<typeof v8.promiseHooks.createHook>[0];

/** Counts the sandbox's promises (its Promise is not the worker's), as bench/replay-promises.ts does. */
const counted = { on: false, promises: 0, sites: undefined as Map<string, number> | undefined };
const createHook = v8.promiseHooks.createHook.bind(v8.promiseHooks);
// Only when counting: the wrapper costs every promise a call more, which would weigh on the side with more.
if (process.argv.includes('--promises'))
  v8.promiseHooks.createHook = (hooks: PromiseHooks) => {
    const init = hooks.init;
    return createHook({
      ...hooks,
      init: (promise, parent) => {
        if (counted.on && promise.constructor !== Promise) {
          counted.promises++;
          if (counted.sites) {
            const SandboxError = (promise.constructor.constructor as FunctionConstructor)(
              'return Error',
            )() as ErrorConstructor;
            const site = (new SandboxError().stack ?? '')
              .split('\n')
              .slice(2, 9)
              .filter((l) => !/initAll|promise_hooks/.test(l))
              .map((l) =>
                l
                  .trim()
                  .replace(/^at /, '')
                  .replace(/webpack:\/\/[^ ]*?\/(node_modules\/)?/, ''),
              )
              .join(' < ');
            counted.sites.set(site, (counted.sites.get(site) ?? 0) + 1);
          }
        }
        init?.(promise, parent);
      },
    });
  };

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const SIDES = ['handLoop', 'agentRun'] as const;
const file = (dir: string, side: string, calls: number) => path.join(dir, `${side}-${calls}.json`);

const bundle = benchBundle;

async function record(dir: string, calls: number, perTurn: number): Promise<void> {
  fs.mkdirSync(dir, { recursive: true });
  const server = await benchServer('replay-cpu');
  try {
    const manifest = benchManifest(
      loadManifest(path.resolve(__dirname, '..', 'examples', 'support-desk', 'manifest.yaml')).manifest,
      [calls, Math.floor(calls / 2), 10].map((n) => [n, perTurn]),
    );
    const native = await NativeConnection.connect({ address: server.address });
    const client = new Client({
      connection: await Connection.connect({
        address: server.address,
        channelArgs: { 'grpc.max_receive_message_length': 64 * 1024 * 1024 },
      }),
    });
    const taskQueue = `replay-cpu-${randomUUID()}`;
    const worker = await benchWorker({ connection: native, taskQueue, manifest, workflowBundle: await bundle() });
    await worker.runUntil(async () => {
      const runs: [string, number][] = [
        ['agentRun', 10],
        ...SIDES.flatMap((s): [string, number][] => [
          [s, calls],
          [s, Math.floor(calls / 2)],
        ]),
      ];
      for (const [side, n] of runs) {
        const workflowId = `${side}-${n}-${randomUUID()}`;
        const args = side === 'agentRun' ? agentRunInput(manifest, n, perTurn) : { calls: n, perTurn };
        await client.workflow.execute(side, { taskQueue, workflowId, args: [args] });
        const chain = await chainOf(client, workflowId);
        if (chain.length !== 1) throw new Error(`${side} of ${n} calls continued as new: record fewer calls`);
        fs.writeFileSync(file(dir, side, n), historyToJSON({ events: chain[0]! }));
        process.stderr.write(`recorded ${side} of ${n} calls: ${chain[0]!.length} events\n`);
      }
    });
    await native.close();
    await client.connection.close();
  } finally {
    await server.close();
  }
}

function read(dir: string, side: string, calls: number): Event[] {
  return historyFromJSON(JSON.parse(fs.readFileSync(file(dir, side, calls), 'utf8'))).events ?? [];
}

async function replay(dir: string, calls: number, rounds: number, promises: boolean): Promise<void> {
  const code = { code: (await bundle()).code };
  const half = Math.floor(calls / 2);
  const histories = SIDES.flatMap((side) => [
    { side, calls, events: read(dir, side, calls) },
    { side, calls: half, events: read(dir, side, half) },
  ]);
  const once = async (h: (typeof histories)[number], id: string) => {
    const before = process.cpuUsage();
    await Worker.runReplayHistory({ workflowBundle: code }, { events: h.events }, id);
    const used = process.cpuUsage(before);
    return used.user + used.system;
  };
  // Warm-up, then rounds; every history each round, sides alternating.
  for (const h of histories) await once(h, `warm-${h.side}-${h.calls}`);
  const whole: Record<string, number[]> = {};
  const further: Record<string, number[]> = {};
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 ? [...SIDES].reverse() : SIDES;
    for (const side of order) {
      const full = await once(
        histories.find((h) => h.side === side && h.calls === calls)!,
        `r${r}-${side}`,
      );
      const part = await once(
        histories.find((h) => h.side === side && h.calls === half)!,
        `r${r}-${side}-half`,
      );
      (whole[side] ??= []).push(full / calls);
      (further[side] ??= []).push((full - part) / (calls - half));
    }
  }
  const [hand, agent] = [median(whole.handLoop!), median(whole.agentRun!)];
  const [fh, fa] = [median(further.handLoop!), median(further.agentRun!)];
  console.log(
    `replay µs per call (${calls} calls, median of ${rounds}): hand loop ${hand.toFixed(0)}, agentRun ${agent.toFixed(0)} (${(agent / hand).toFixed(3)}×)`,
  );
  console.log(
    `  per further call (${calls} - ${half}): hand loop ${fh.toFixed(0)}, agentRun ${fa.toFixed(0)} (${(fa / fh).toFixed(3)}×)`,
  );
  console.log(`  samples hand ${whole.handLoop!.map((x) => x.toFixed(0)).join(' ')}`);
  console.log(`  samples agent ${whole.agentRun!.map((x) => x.toFixed(0)).join(' ')}`);
  if (promises) {
    const count = async (side: string, n: number) => {
      counted.promises = 0;
      counted.on = true;
      await Worker.runReplayHistory({ workflowBundle: code }, { events: read(dir, side, n) }, `p-${side}-${n}`);
      counted.on = false;
      return counted.promises;
    };
    for (const side of SIDES) {
      const sites = new Map<string, number>();
      counted.sites = sites;
      const p1 = await count(side, half);
      const at1 = new Map(sites);
      sites.clear();
      const p2 = await count(side, calls);
      counted.sites = undefined;
      console.log(`  promise sites of ${side} per further call:`);
      for (const [site, n] of [...sites].sort((a, b) => b[1] - a[1])) {
        const per = (n - (at1.get(site) ?? 0)) / (calls - half);
        if (Math.abs(per) >= 0.01) console.log(`    ${per.toFixed(2)} ${site}`);
      }
      console.log(
        `  sandbox promises ${side}: per further call ${((p2 - p1) / (calls - half)).toFixed(2)}, whole ${calls}-call run ${p2}`,
      );
    }
  }
}

/** The 10-call agentRun's commands in order: event type, activity type, id, summary and input, markers, upserts. */
function dump(dir: string): void {
  const text = (p?: { data?: Uint8Array | null } | null) => (p?.data ? Buffer.from(p.data).toString('utf8') : '');
  const fields = (f?: Record<string, { data?: Uint8Array | null }> | null) =>
    Object.entries(f ?? {})
      .map(([k, v]) => `${k}=${text(v)}`)
      .join(' ');
  for (const e of read(dir, 'agentRun', 10)) {
    const a = e.activityTaskScheduledEventAttributes;
    const m = e.markerRecordedEventAttributes;
    const u = e.upsertWorkflowSearchAttributesEventAttributes;
    const mod = e.workflowPropertiesModifiedEventAttributes;
    const summary = text(e.userMetadata?.summary);
    const type = temporal.api.enums.v1.EventType[e.eventType ?? 0];
    if (a)
      console.log(
        `${type} ${a.activityType?.name} ${a.activityId} [${summary}] ${a.input?.payloads?.map(text).join(' ')} ${JSON.stringify(a.retryPolicy)} ${JSON.stringify(a.header)}`,
      );
    else if (m)
      console.log(
        `${type} ${m.markerName} ${Object.values(m.details ?? {})
          .flatMap((d) => d.payloads?.map(text))
          .join(' ')}`,
      );
    else if (u) console.log(`${type} ${fields(u.searchAttributes?.indexedFields)}`);
    else if (mod) console.log(`${type} ${fields(mod.upsertedMemo?.fields)}`);
    else if (e.workflowExecutionStartedEventAttributes || e.workflowExecutionCompletedEventAttributes)
      console.log(
        `${type} ${(e.workflowExecutionStartedEventAttributes?.input ?? e.workflowExecutionCompletedEventAttributes?.result)?.payloads?.map(text).join(' ')}`,
      );
    else console.log(`${type}${summary ? ` [${summary}]` : ''}`);
  }
}

interface ProfileNode {
  id: number;
  callFrame: { url: string; lineNumber: number; columnNumber: number; functionName?: string };
  children?: number[];
  selfSize?: number;
}

/** A frame by its source: file:line (function), through the bundle's inline source map. */
function framer(code: string) {
  const at = code.lastIndexOf('//# sourceMappingURL=data:');
  const map = new SourceMapConsumer(
    JSON.parse(Buffer.from(code.slice(at).split('base64,')[1]!.trim(), 'base64').toString('utf8')) as RawSourceMap,
  );
  const names = new Map<string, string>();
  return (f: ProfileNode['callFrame']): string => {
    const k = `${f.url}:${f.lineNumber}:${f.columnNumber}:${f.functionName}`;
    let n = names.get(k);
    if (n) return n;
    if (/workflow-bundle-/.test(f.url) && f.lineNumber >= 0) {
      const p = map.originalPositionFor({ line: f.lineNumber + 1, column: f.columnNumber });
      const src = (p.source ?? '?').replace(/^webpack:\/\/\/?/, '').replace(/.*node_modules\//, 'nm/');
      n = `${src}:${p.line} ${f.functionName || '(anon)'}`;
    } else
      n = `${f.url.replace(/.*node_modules\//, 'nm/') || '(native)'}:${f.lineNumber} ${f.functionName || '(anon)'}`;
    names.set(k, n);
    return n;
  };
}

/** Replays the agentRun (or `side`) history `times` times under the CPU profiler and the sampling heap profiler. */
async function profile(
  dir: string,
  side: string,
  calls: number,
  times: number,
  top: number,
  under?: string,
): Promise<void> {
  const code = (await bundle()).code;
  const frame = framer(code);
  const events = read(dir, side, calls);
  await Worker.runReplayHistory({ workflowBundle: { code } }, { events }, 'warm');
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 50 });
  await session.post('HeapProfiler.enable');
  await session.post('HeapProfiler.startSampling', { samplingInterval: 512 });
  await session.post('Profiler.start');
  for (let i = 0; i < times; i++) await Worker.runReplayHistory({ workflowBundle: { code } }, { events }, `p${i}`);
  const { profile: cpu } = (await session.post('Profiler.stop')) as {
    profile: { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };
  };
  const { profile: heap } = (await session.post('HeapProfiler.stopSampling')) as unknown as {
    profile: { head: ProfileNode };
  };
  session.disconnect();
  const byId = new Map(cpu.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  for (let i = 0; i < cpu.samples.length; i++) {
    const n = byId.get(cpu.samples[i]!)!;
    const k = frame(n.callFrame);
    self.set(k, (self.get(k) ?? 0) + (cpu.timeDeltas[i + 1] ?? 0));
  }
  const per = calls * times;
  // Inclusive: each sample's time to every distinct frame on its stack.
  const parent = new Map<number, number>();
  for (const n of cpu.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const inclusive = new Map<string, number>();
  for (let i = 0; i < cpu.samples.length; i++) {
    const seen = new Set<string>();
    for (let id: number | undefined = cpu.samples[i]; id !== undefined; id = parent.get(id))
      seen.add(frame(byId.get(id)!.callFrame));
    for (const k of seen) inclusive.set(k, (inclusive.get(k) ?? 0) + (cpu.timeDeltas[i + 1] ?? 0));
  }
  // With --under: the samples in frames matching it, by the nearest project frame that called them.
  if (under) {
    const re = new RegExp(under);
    const callers = new Map<string, number>();
    for (let i = 0; i < cpu.samples.length; i++) {
      let hit = false;
      for (let id: number | undefined = cpu.samples[i]; id !== undefined; id = parent.get(id)) {
        const k = frame(byId.get(id)!.callFrame);
        if (!hit && re.test(k)) hit = true;
        else if (hit && /^\/work\//.test(k) && !k.includes('/node_modules/')) {
          callers.set(k, (callers.get(k) ?? 0) + (cpu.timeDeltas[i + 1] ?? 0));
          break;
        }
      }
    }
    console.log(`CPU µs per call under /${under}/, by the project frame that called it:`);
    for (const [k, us] of [...callers].sort((a, b) => b[1] - a[1]).slice(0, 30))
      console.log(`  ${(us / per).toFixed(1).padStart(7)} ${k}`);
  }
  console.log(`inclusive CPU µs per call (${side}), top ${top}:`);
  for (const [k, us] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, top))
    console.log(`  ${(us / per).toFixed(1).padStart(7)} ${k}`);
  console.log(`self CPU µs per call (${side}, ${calls} calls × ${times}), top ${top}:`);
  for (const [k, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top))
    console.log(`  ${(us / per).toFixed(1).padStart(7)} ${k}`);
  const alloc = new Map<string, number>();
  const walk = (n: ProfileNode) => {
    const k = frame(n.callFrame);
    alloc.set(k, (alloc.get(k) ?? 0) + (n.selfSize ?? 0));
    for (const c of (n.children ?? []) as unknown as ProfileNode[]) walk(c);
  };
  walk(heap.head);
  console.log(`allocated bytes per call (sampled), top ${top}:`);
  for (const [k, b] of [...alloc].sort((a, b) => b[1] - a[1]).slice(0, top))
    console.log(`  ${(b / per).toFixed(0).padStart(7)} ${k}`);
}

/**
 * A/B: the agentRun histories replayed with a saved bundle (`--save-bundle`, e.g. of the code before a
 * change) and with the workflows as they are now, alternating in one process, so load drifts alike on
 * both; the hand loop with the current bundle beside them.
 */
async function compare(dir: string, baseline: string, calls: number, rounds: number): Promise<void> {
  const bundles: [string, { code: string }][] = [
    ['before', { code: fs.readFileSync(baseline, 'utf8') }],
    ['after', { code: (await bundle()).code }],
  ];
  const half = Math.floor(calls / 2);
  const runs: [string, { code: string }, string][] = [
    ...bundles.map(([name, b]): [string, { code: string }, string] => [`agentRun ${name}`, b, 'agentRun']),
    ['handLoop', bundles[1]![1], 'handLoop'],
  ];
  const events = (side: string, n: number) => read(dir, side, n);
  const once = async (b: { code: string }, side: string, n: number, id: string) => {
    const e = events(side, n);
    const before = process.cpuUsage();
    await Worker.runReplayHistory({ workflowBundle: b }, { events: e }, id);
    const used = process.cpuUsage(before);
    return used.user + used.system;
  };
  for (const [name, b, side] of runs) await once(b, side, calls, `warm-${name}`);
  const whole = new Map<string, number[]>();
  const further = new Map<string, number[]>();
  for (let r = 0; r < rounds; r++)
    for (const [name, b, side] of r % 2 ? [...runs].reverse() : runs) {
      const full = await once(b, side, calls, `r${r}-${name}`);
      const part = await once(b, side, half, `r${r}-${name}-half`);
      whole.set(name, [...(whole.get(name) ?? []), full / calls]);
      further.set(name, [...(further.get(name) ?? []), (full - part) / (calls - half)]);
    }
  const hand = median(whole.get('handLoop')!);
  const handFurther = median(further.get('handLoop')!);
  for (const [name] of runs) {
    const w = median(whole.get(name)!);
    const f = median(further.get(name)!);
    console.log(
      `${name.padEnd(16)} µs per call ${w.toFixed(0)} (${(w / hand).toFixed(3)}× the hand loop), per further call ${f.toFixed(0)} (${(f / handFurther).toFixed(3)}×)`,
    );
  }
}

async function main(): Promise<void> {
  const o = new Command()
    .option('--record <dir>')
    .option('--replay <dir>')
    .option('--dump <dir>')
    .option('--calls <n>', 'calls of the longer runs', '500')
    .option('--per-turn <n>', 'calls per model turn', '10')
    .option('--rounds <n>', 'measured rounds', '5')
    .option('--promises', 'count sandbox promises per further call')
    .option('--save-bundle <file>', 'write the workflow bundle as it is now to a file')
    .option('--compare <bundle>', 'A/B: replay DIR (--replay) with this saved bundle and with the current code')
    .option('--profile <dir>', 'self CPU and allocation by function, replaying --side')
    .option('--side <side>', 'side to profile', 'agentRun')
    .option('--top <n>', 'rows', '60')
    .option('--under <regex>', 'with --profile: time in matching frames, by the project frame that called them')
    .parse(process.argv)
    .opts<{
      record?: string;
      replay?: string;
      dump?: string;
      calls: string;
      perTurn: string;
      rounds: string;
      promises?: boolean;
      saveBundle?: string;
      compare?: string;
      profile?: string;
      side: string;
      top: string;
      under?: string;
    }>();
  if (o.record) await record(o.record, Number(o.calls), Number(o.perTurn));
  if (o.saveBundle) fs.writeFileSync(o.saveBundle, (await bundle()).code);
  if (o.replay && o.compare) {
    Runtime.install({ logger: new DefaultLogger('WARN') });
    await compare(o.replay, o.compare, Number(o.calls), Number(o.rounds));
  } else if (o.replay) {
    Runtime.install({ logger: new DefaultLogger('WARN') });
    await replay(o.replay, Number(o.calls), Number(o.rounds), o.promises === true);
  }
  if (o.dump) dump(o.dump);
  if (o.profile) {
    Runtime.install({ logger: new DefaultLogger('WARN') });
    await profile(o.profile, o.side, Number(o.calls), Number(o.rounds), Number(o.top), o.under);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
