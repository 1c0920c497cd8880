/**
 * `npm run bench`: the same workload through a plain activity and through StepCtx.callTool, in
 * one process against one server, alternating in rounds so machine noise hits both alike.
 * Prints toolplane/plain ratios and writes bench/results/latest.json.
 *
 *   npm run bench -- [--rounds 6] [--workflows 4] [--calls 25]
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import { Command } from 'commander';
import { loadManifest } from '../catalog/manifest-file';
import { createTools } from '../examples/support-desk/tools';
import { freePort, startDevServer } from '../scripts/dev-server';
import { createWorker } from '../worker';
import { createBenchActivities } from './activities';

type Side = 'plain' | 'toolplane';
type Event = temporal.api.history.v1.IHistoryEvent;

interface SideFigures {
  calls: number;
  seconds: number;
  latenciesMs: number[];
  events: number;
  /** Events and bytes of the per-call part of each history (without the run's start and end). */
  callEvents: number;
  callBytes: number;
  runBytes: number;
  runs: number;
}

const quiet = { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} };

function ms(e: Event): number {
  const t = e.eventTime!;
  return Number(t.seconds) * 1000 + Math.floor((t.nanos ?? 0) / 1e6);
}

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
}

/** Per-call latency: from one call's scheduling to the next one's, as the history records them. */
function callLatencies(events: Event[]): number[] {
  const marks = events.filter((e) => e.activityTaskScheduledEventAttributes).map(ms);
  const end = events.find((e) => e.workflowExecutionCompletedEventAttributes);
  if (end) marks.push(ms(end));
  return marks.slice(1).map((t, i) => t - marks[i]!);
}

function eventBytes(e: Event): number {
  return temporal.api.history.v1.HistoryEvent.encode(e).finish().length;
}

async function main(): Promise<void> {
  const o = new Command()
    .option('--rounds <n>', 'alternating rounds', '6')
    .option('--workflows <n>', 'concurrent workflows per round and side', '4')
    .option('--calls <n>', 'tool calls per workflow', '25')
    .option('--out <file>', 'results file', path.resolve(__dirname, 'results', 'latest.json'))
    .parse(process.argv)
    .opts<{ rounds: string; workflows: string; calls: string; out: string }>();
  const rounds = Number(o.rounds);
  const perRound = Number(o.workflows);
  const calls = Number(o.calls);

  Runtime.install({ logger: new DefaultLogger('WARN') });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolplane-bench-'));
  const server = await startDevServer({
    port: await freePort(),
    uiPort: await freePort(),
    dbFile: path.join(dir, 'temporal.sqlite'),
    log: () => {},
  });
  const manifest = loadManifest(path.resolve(__dirname, '..', 'examples', 'support-desk', 'manifest.yaml')).manifest;
  try {
    const { code } = await bundleWorkflowCode({ workflowsPath: require.resolve('./workflows'), logger: quiet });
    const native = await NativeConnection.connect({ address: server.address });
    const client = new Client({ connection: await Connection.connect({ address: server.address }) });
    const taskQueue = `bench-${randomUUID()}`;
    const worker: Worker = await createWorker({
      connection: native,
      taskQueue,
      manifest,
      tools: createTools(),
      workflowBundle: { code },
      activities: createBenchActivities(),
    });

    const figures: Record<Side, SideFigures> = {
      plain: { calls: 0, seconds: 0, latenciesMs: [], events: 0, callEvents: 0, callBytes: 0, runBytes: 0, runs: 0 },
      toolplane: {
        calls: 0,
        seconds: 0,
        latenciesMs: [],
        events: 0,
        callEvents: 0,
        callBytes: 0,
        runBytes: 0,
        runs: 0,
      },
    };

    async function batch(side: Side, measure: boolean): Promise<void> {
      const started = process.hrtime.bigint();
      const ids = await Promise.all(
        Array.from({ length: perRound }, async () => {
          const workflowId = `bench-${side}-${randomUUID()}`;
          await client.workflow.execute(side === 'plain' ? 'plainCalls' : 'toolplaneCalls', {
            taskQueue,
            workflowId,
            args: [{ calls, manifest }],
          });
          return workflowId;
        }),
      );
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      if (!measure) return;
      const f = figures[side];
      f.calls += perRound * calls;
      f.seconds += seconds;
      for (const id of ids) {
        const events = (await client.workflow.getHandle(id).fetchHistory()).events ?? [];
        f.runs++;
        f.events += events.length;
        f.latenciesMs.push(...callLatencies(events));
        const perCall = events.filter(
          (e) => !e.workflowExecutionStartedEventAttributes && !e.workflowExecutionCompletedEventAttributes,
        );
        f.callEvents += perCall.length;
        f.callBytes += perCall.reduce((n, e) => n + eventBytes(e), 0);
        f.runBytes += events.reduce((n, e) => n + eventBytes(e), 0);
      }
    }

    await worker.runUntil(async () => {
      await batch('plain', false);
      await batch('toolplane', false);
      for (let r = 0; r < rounds; r++) {
        const order: Side[] = r % 2 === 0 ? ['plain', 'toolplane'] : ['toolplane', 'plain'];
        for (const side of order) await batch(side, true);
        process.stderr.write(`round ${r + 1}/${rounds} done\n`);
      }
    });
    await native.close();
    await client.connection.close();

    const derive = (f: SideFigures) => ({
      throughput: f.calls / f.seconds,
      p50: percentile(f.latenciesMs, 50),
      p99: percentile(f.latenciesMs, 99),
      eventsPerCall: f.callEvents / f.calls,
      bytesPerCall: f.callBytes / f.calls,
      runBytesPerCall: f.runBytes / f.calls,
    });
    const plain = derive(figures.plain);
    const plane = derive(figures.toolplane);
    const results = {
      at: new Date().toISOString(),
      workload: {
        rounds,
        workflowsPerRound: perRound,
        callsPerWorkflow: calls,
        host: `${os.cpus().length} cpus, node ${process.version}`,
      },
      throughputRatio: plane.throughput / plain.throughput,
      p50Ratio: plane.p50 / plain.p50,
      p99Ratio: plane.p99 / plain.p99,
      eventsPerCallRatio: plane.eventsPerCall / plain.eventsPerCall,
      bytesPerCallRatio: plane.bytesPerCall / plain.bytesPerCall,
      runBytesPerCallRatio: plane.runBytesPerCall / plain.runBytesPerCall,
      plain,
      toolplane: plane,
      goals: {
        throughputRatio: '>= 0.95',
        p50Ratio: '<= 1.05',
        eventsPerCallRatio: '== 1',
        bytesPerCallRatio: '<= 1.25',
      },
    };
    const row = (name: string, a: number, b: number, unit: string, digits = 1) =>
      `${name.padEnd(26)}${a.toFixed(digits).padStart(12)}${b.toFixed(digits).padStart(12)}  ${unit.padEnd(8)}${(b / a).toFixed(3).padStart(8)}`;
    console.log(
      `${''.padEnd(26)}${'plain'.padStart(12)}${'toolplane'.padStart(12)}  ${'unit'.padEnd(8)}${'ratio'.padStart(8)}`,
    );
    console.log(row('throughput', plain.throughput, plane.throughput, 'calls/s'));
    console.log(row('latency p50', plain.p50, plane.p50, 'ms'));
    console.log(row('latency p99', plain.p99, plane.p99, 'ms'));
    console.log(row('history events per call', plain.eventsPerCall, plane.eventsPerCall, 'events', 2));
    console.log(row('history bytes per call', plain.bytesPerCall, plane.bytesPerCall, 'bytes'));
    console.log(row('  incl. run start and end', plain.runBytesPerCall, plane.runBytesPerCall, 'bytes'));
    fs.mkdirSync(path.dirname(o.out), { recursive: true });
    fs.writeFileSync(o.out, JSON.stringify(results, null, 2) + '\n');
    console.log(`written ${path.relative(process.cwd(), o.out)}`);
  } finally {
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
