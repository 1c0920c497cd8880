/**
 * `npx tsx bench/agent-wall.ts`: agentRun's wall time against the hand loop's, repeatably. The full
 * bench's wall figures move ±10% between runs on a small machine; this runs N alternating runs of
 * each side at each size on one worker (the bench's setup: dev server with eager activities, the
 * bench manifest, the same bundle) and prints the median seconds per run, then where a run's time
 * goes as its history's timestamps show it (median ms per run, by interval kind) and what the
 * worker spent in each activity and local activity (median ms per run, by activity type).
 *
 *   npx tsx bench/agent-wall.ts [--runs 20] [--sizes 10,100] [--per-turn 10] [--json]
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import {
  NativeConnection,
  type ActivityInboundCallsInterceptor,
  type ActivityExecuteInput,
  type Next,
} from '@temporalio/worker';
import { type Context } from '@temporalio/activity';
import { Command } from 'commander';
import { loadManifest } from '../runtime/manifest-file';
import { benchServer } from './bench-server';
import { benchBundle, benchWorker } from './bench-worker';
import { agentRunInput, benchManifest } from './long';

type Event = temporal.api.history.v1.IHistoryEvent;

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

function ms(e: Event): number {
  const t = e.eventTime!;
  return Number(t.seconds) * 1000 + (t.nanos ?? 0) / 1e6;
}

/**
 * Where a run's time goes between its first and last event, by the kind of interval: a workflow
 * task waiting for a worker (`wft queue`), a worker running it (`wft run`), an activity waiting
 * (`act queue`), running (`act run`), and the gap from an activity's completion to the next
 * workflow task (`act done→wft`). Sums per run, in ms.
 */
function timeline(events: Event[]): Record<string, number> {
  const out: Record<string, number> = {};
  const add = (k: string, v: number) => (out[k] = (out[k] ?? 0) + v);
  const byId = new Map<number, Event>();
  for (const e of events) byId.set(Number(e.eventId), e);
  for (const e of events) {
    const a = e.workflowTaskStartedEventAttributes;
    if (a) add('wft queue', ms(e) - ms(byId.get(Number(a.scheduledEventId))!));
    const c = e.workflowTaskCompletedEventAttributes;
    if (c) add('wft run', ms(e) - ms(byId.get(Number(c.startedEventId))!));
    const as = e.activityTaskStartedEventAttributes;
    if (as) add('act queue', ms(e) - ms(byId.get(Number(as.scheduledEventId))!));
    const ac = e.activityTaskCompletedEventAttributes;
    if (ac) add('act run', ms(e) - ms(byId.get(Number(ac.startedEventId))!));
  }
  // From the last activity completion before a workflow task was scheduled to that scheduling.
  for (let i = 1; i < events.length; i++) {
    const e = events[i]!;
    if (!e.workflowTaskScheduledEventAttributes) continue;
    const prev = events[i - 1]!;
    if (prev.activityTaskCompletedEventAttributes) add('act done→wft', ms(e) - ms(prev));
  }
  add('first→last event', ms(events.at(-1)!) - ms(events[0]!));
  add('events', events.length);
  add('wfts', events.filter((e) => e.workflowTaskCompletedEventAttributes).length);
  return out;
}

const MODEL_TURNS = new Set(['modelTurn', 'benchModelTurn']);

/**
 * A run's critical path, in ms: from its start to its first model turn's scheduling (`open`), the
 * model turns (`turn`, split into dispatch to the worker, the worker's body and the completion's
 * report back by the worker's own clock), from a turn's answer to its tools' scheduling
 * (`turn→tools`), the tools from the first scheduled to the last completed (`tools`), from there to
 * the next turn (`tools→turn`), and from the last answer to the run's end (`close`).
 */
function phases(events: Event[], worker: [string, number, number][]): Record<string, number> {
  const out: Record<string, number> = {};
  const add = (k: string, v: number) => (out[k] = (out[k] ?? 0) + v);
  const types = new Map<number, string>();
  const starts = new Map<number, number>();
  const turnSpans = worker.filter(([t]) => MODEL_TURNS.has(t));
  let turnNo = 0;
  let lastTurnDone: number | undefined;
  let firstTool: number | undefined;
  let lastTool: number | undefined;
  const t0 = ms(events[0]!);
  // The first workflow task, around the run's local activity (agentRun's authorizeRun), if any.
  const wft1Start = events.find((e) => e.workflowTaskStartedEventAttributes);
  const wft1Done = events.find((e) => e.workflowTaskCompletedEventAttributes);
  const local = worker.find(([t]) => t === 'authorizeRun');
  if (wft1Start && wft1Done) {
    add('  open: to the first task', ms(wft1Start) - t0);
    if (local) {
      add('  open: task start→local activity', local[1] - ms(wft1Start));
      add('  open: local activity body', local[2] - local[1]);
      add('  open: local activity→task done', ms(wft1Done) - local[2]);
    } else add('  open: first task', ms(wft1Done) - ms(wft1Start));
  }
  for (const e of events) {
    const sched = e.activityTaskScheduledEventAttributes;
    if (sched) {
      const type = sched.activityType?.name ?? '';
      types.set(Number(e.eventId), type);
      if (MODEL_TURNS.has(type)) {
        if (lastTurnDone === undefined) add('open', ms(e) - t0);
        else if (lastTool !== undefined && firstTool !== undefined) {
          add('tools', lastTool - firstTool);
          add('tools→turn', ms(e) - lastTool);
        }
        firstTool = lastTool = undefined;
      } else if (firstTool === undefined) {
        firstTool = ms(e);
        if (lastTurnDone !== undefined) add('turn→tools', ms(e) - lastTurnDone);
      }
    }
    const started = e.activityTaskStartedEventAttributes;
    if (started) starts.set(Number(started.scheduledEventId), ms(e));
    const done = e.activityTaskCompletedEventAttributes;
    if (done) {
      const id = Number(done.scheduledEventId);
      const type = types.get(id) ?? '';
      if (MODEL_TURNS.has(type)) {
        const span = turnSpans[turnNo++];
        const begun = starts.get(id)!;
        add('turn', ms(e) - begun);
        if (span) {
          add('  turn: to the worker', span[1] - begun);
          add('  turn: body', span[2] - span[1]);
          add('  turn: report', ms(e) - span[2]);
        }
        lastTurnDone = ms(e);
      } else {
        lastTool = Math.max(lastTool ?? 0, ms(e));
      }
    }
    if (e.workflowExecutionCompletedEventAttributes && lastTurnDone !== undefined) add('close', ms(e) - lastTurnDone);
  }
  return out;
}

/** Each event's time from the run's start and from the event before it, and its type. */
function trace(events: Event[]): string[] {
  const t0 = ms(events[0]!);
  return events.map((e, i) => {
    const kind = Object.keys(e).find((k) => k.endsWith('EventAttributes') && e[k as keyof Event]) ?? '?';
    const gap = i === 0 ? 0 : ms(e) - ms(events[i - 1]!);
    return `${String(e.eventId).padStart(4)} ${(ms(e) - t0).toFixed(1).padStart(8)} ${gap.toFixed(1).padStart(7)}  ${kind.replace('EventAttributes', '')}`;
  });
}

/**
 * CPU ticks each kind of thread of this process has used (Linux): the main thread (the client,
 * activities, the worker's JavaScript), the SDK core's threads (`tokio-*`), and the others (the
 * workflow thread, libuv's pool, V8's helpers). Empty where /proc is not there.
 */
function threadTicks(): Record<string, number> {
  const out: Record<string, number> = {};
  const dir = '/proc/self/task';
  if (!fs.existsSync(dir)) return out;
  for (const tid of fs.readdirSync(dir)) {
    let stat: string;
    try {
      stat = fs.readFileSync(path.join(dir, tid, 'stat'), 'utf8');
    } catch {
      continue; // the thread ended
    }
    const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    const kind =
      Number(tid) === process.pid ? 'main thread' : comm.startsWith('tokio') ? 'core threads' : 'other threads';
    out[kind] = (out[kind] ?? 0) + ticks;
  }
  return out;
}

/** The worker's own time in each activity, by type, collected per workflow run. */
const spent = new Map<string, Record<string, number>>();
/** Wall-clock times (ms since the epoch) at which the worker began and ended each activity, per run. */
const spans = new Map<string, [string, number, number][]>();
const now = () => performance.timeOrigin + performance.now();
function record(workflowId: string, type: string, msTaken: number): void {
  const m = spent.get(workflowId) ?? {};
  m[type] = (m[type] ?? 0) + msTaken;
  m[`${type} (n)`] = (m[`${type} (n)`] ?? 0) + 1;
  spent.set(workflowId, m);
}
class Timing implements ActivityInboundCallsInterceptor {
  constructor(private readonly ctx: Context) {}
  async execute(input: ActivityExecuteInput, next: Next<ActivityInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    const started = process.hrtime.bigint();
    const t0 = now();
    try {
      return await next(input);
    } finally {
      const info = this.ctx.info;
      const list = spans.get(info.workflowExecution?.workflowId ?? '') ?? [];
      list.push([info.activityType, t0, now()]);
      spans.set(info.workflowExecution?.workflowId ?? '', list);
      record(
        info.workflowExecution?.workflowId ?? '',
        `${info.isLocal ? 'local ' : ''}${info.activityType}`,
        Number(process.hrtime.bigint() - started) / 1e6,
      );
    }
  }
}

async function main(): Promise<void> {
  const o = new Command()
    .option('--runs <n>', 'runs of each side at each size', '20')
    .option('--sizes <list>', 'calls per run', '10,100')
    .option('--per-turn <n>', 'tool calls per model turn', '10')
    .option('--json', 'print the figures as JSON on the last line')
    .option('--only <side>', 'run one side only (hand or agentRun), e.g. under --cpu-prof')
    .option('--trace', "print the events of each side's last run at each size, with their times")
    .parse(process.argv)
    .opts<{ runs: string; sizes: string; perTurn: string; json?: boolean; trace?: boolean; only?: string }>();
  const runs = Number(o.runs);
  const sizes = o.sizes.split(',').map(Number);
  const perTurn = Number(o.perTurn);
  const load = [os.loadavg()];

  const server = await benchServer('agent-wall');
  const manifest = benchManifest(
    loadManifest(path.resolve(__dirname, '..', 'examples', 'support-desk', 'manifest.yaml')).manifest,
    [...new Set([10, ...sizes])].map((n) => [n, perTurn]),
  );
  try {
    const bundle = await benchBundle();
    const native = await NativeConnection.connect({ address: server.address });
    const client = new Client({ connection: await Connection.connect({ address: server.address }) });
    const taskQueue = `agent-wall-${randomUUID()}`;
    const worker = await benchWorker({
      connection: native,
      taskQueue,
      manifest,
      workflowBundle: bundle,
      workerOptions: { interceptors: { activity: [(ctx) => ({ inbound: new Timing(ctx) })] } },
    });
    const running = worker.run();
    const sides = {
      hand: (n: number) => ['handLoop', { calls: n, perTurn }] as const,
      agentRun: (n: number) => ['agentRun', agentRunInput(manifest, n, perTurn)] as const,
    };
    type Side = keyof typeof sides;
    const seconds: Record<string, number[]> = {};
    const ids: Record<string, string[]> = {};
    /** This process's CPU (every thread: the client, the worker's activities, workflow thread and core) per run. */
    const cpuMs: Record<string, number[]> = {};
    const threadMs: Record<string, Record<string, number>> = {};
    const once = async (side: Side, n: number, keep: boolean) => {
      const [type, args] = sides[side](n);
      const workflowId = `agent-wall-${type}-${randomUUID()}`;
      const ticks = threadTicks();
      const started = process.hrtime.bigint();
      const cpu = process.cpuUsage();
      await client.workflow.execute(type, { taskQueue, workflowId, args: [args] });
      const s = Number(process.hrtime.bigint() - started) / 1e9;
      const used = process.cpuUsage(cpu);
      if (!keep) return;
      (seconds[`${side} ${n}`] ??= []).push(s);
      (cpuMs[`${side} ${n}`] ??= []).push((used.user + used.system) / 1000);
      const after = threadTicks();
      const t = (threadMs[`${side} ${n}`] ??= {});
      // Ticks are 10 ms (USER_HZ 100): summed over the runs and divided, not a median.
      for (const [k, v] of Object.entries(after)) t[k] = (t[k] ?? 0) + (v - (ticks[k] ?? 0)) * 10;
      (ids[`${side} ${n}`] ??= []).push(workflowId);
    };
    try {
      for (const n of sizes)
        for (const side of (o.only ? [o.only] : ['hand', 'agentRun']) as Side[])
          for (let i = 0; i < 2; i++) await once(side, n, false);
      for (let r = 0; r < runs; r++) {
        const order: Side[] = o.only ? [o.only as Side] : r % 2 ? ['agentRun', 'hand'] : ['hand', 'agentRun'];
        for (const n of sizes) for (const side of order) await once(side, n, true);
        if (r % 5 === 4) process.stderr.write(`round ${r + 1}/${runs}\n`);
      }
      load.push(os.loadavg());
    } finally {
      worker.shutdown();
      await running;
    }

    const figures: Record<string, unknown> = { runs, perTurn, load: load.map((l) => l.map((x) => +x.toFixed(2))) };
    for (const n of sizes) {
      const hand = median(seconds[`hand ${n}`] ?? []);
      const agent = median(seconds[`agentRun ${n}`] ?? []);
      // Each round's agentRun against the hand loop run beside it: a load that changes between rounds cancels out.
      const hs = seconds[`hand ${n}`] ?? [];
      const paired = median((seconds[`agentRun ${n}`] ?? []).map((a, i) => a / hs[i]!));
      const handCpu = median(cpuMs[`hand ${n}`] ?? []);
      const agentCpu = median(cpuMs[`agentRun ${n}`] ?? []);
      figures[n] = {
        handSecondsPerRun: hand,
        agentRunSecondsPerRun: agent,
        ratio: agent / hand,
        pairedRatio: paired,
        handCpuMsPerRun: handCpu,
        agentRunCpuMsPerRun: agentCpu,
      };
      console.log(
        `\n${n} calls, median of ${runs} runs: hand loop ${(hand * 1000).toFixed(1)} ms, agentRun ${(agent * 1000).toFixed(1)} ms, ratio ${(agent / hand).toFixed(3)}, median of the rounds' ratios ${paired.toFixed(3)}`,
      );
      const tl: Record<Side, Record<string, number[]>> = { hand: {}, agentRun: {} };
      const act: Record<Side, Record<string, number[]>> = { hand: {}, agentRun: {} };
      const cp: Record<Side, Record<string, number[]>> = { hand: {}, agentRun: {} };
      for (const side of ['hand', 'agentRun'] as Side[]) {
        for (const id of ids[`${side} ${n}`] ?? []) {
          const events = (await client.workflow.getHandle(id).fetchHistory()).events ?? [];
          for (const [k, v] of Object.entries(timeline(events))) (tl[side][k] ??= []).push(v);
          for (const [k, v] of Object.entries(phases(events, spans.get(id) ?? []))) (cp[side][k] ??= []).push(v);
          for (const [k, v] of Object.entries(spent.get(id) ?? {})) (act[side][k] ??= []).push(v);
        }
      }
      const table = (title: string, t: Record<Side, Record<string, number[]>>) => {
        console.log(`  ${title.padEnd(40)}${'hand'.padStart(10)}${'agentRun'.padStart(10)}`);
        const keys = [...new Set([...Object.keys(t.hand), ...Object.keys(t.agentRun)])];
        for (const k of keys)
          console.log(
            `  ${k.padEnd(40)}${median(t.hand[k] ?? [0])
              .toFixed(1)
              .padStart(10)}${median(t.agentRun[k] ?? [0])
              .toFixed(1)
              .padStart(10)}`,
          );
      };
      console.log(
        `  CPU of this process per run (median): hand loop ${handCpu.toFixed(1)} ms, agentRun ${agentCpu.toFixed(1)} ms`,
      );
      const perThread = (side: string) =>
        Object.entries(threadMs[`${side} ${n}`] ?? {})
          .map(([k, v]) => `${k} ${(v / runs).toFixed(1)}`)
          .join(', ');
      console.log(
        `  CPU ms per run by thread (mean): hand loop ${perThread('hand')}; agentRun ${perThread('agentRun')}`,
      );
      table('history, median ms per run', tl);
      table('critical path, median ms per run', cp);
      if (o.trace)
        for (const side of ['hand', 'agentRun'] as Side[]) {
          const events = (await client.workflow.getHandle(ids[`${side} ${n}`]!.at(-1)!).fetchHistory()).events ?? [];
          console.log(`  ${side}, its last run:`);
          for (const line of trace(events)) console.log(`    ${line}`);
          const t0 = ms(events[0]!);
          for (const [type, a, b] of spans.get(ids[`${side} ${n}`]!.at(-1)!) ?? [])
            console.log(`    worker: ${type} ${(a - t0).toFixed(1)} → ${(b - t0).toFixed(1)}`);
        }
      table('worker time in activities, median ms per run', act);
    }
    console.log(`\nload average: ${load.map((l) => l.map((x) => x.toFixed(2)).join(' ')).join(' → ')}`);
    if (o.json) console.log(JSON.stringify(figures));
  } finally {
    await server.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
