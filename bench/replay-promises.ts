/**
 * Where replay CPU goes: the Temporal SDK captures a stack trace (mapped through the bundle's source
 * map) for every promise created inside the workflow sandbox. This records a plain and a callTool
 * run of the same calls, then replays both in child processes, alternating, with that capture on
 * (counting the sandbox's promises) and off. The SDK installs its hook once per process. Promises per
 * call are what a further call costs: runs of N and 2N calls are replayed, and the difference is
 * divided by N, so the run's opening (its authorization, its StepCtx) is counted once, apart, as the
 * bytes of a run's opening are.
 *
 *   npx tsx bench/replay-promises.ts [--calls 300] [--rounds 5] [--json]
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import v8 from 'node:v8';
import { Client, Connection } from '@temporalio/client';
import { historyFromJSON, historyToJSON } from '@temporalio/common/lib/proto-utils';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { Command } from 'commander';
import { loadManifest } from '../runtime/manifest-file';
import { benchServer } from './bench-server';
import { benchBundle, benchWorker } from './bench-worker';

type PromiseHooks = Parameters<typeof v8.promiseHooks.createHook>[0];

/** A child replays with the SDK's promise hook (`--capture on`) or without; it counts the sandbox's promises. */
const capture = { on: true, sandboxPromises: 0 };
const createHook = v8.promiseHooks.createHook.bind(v8.promiseHooks);
v8.promiseHooks.createHook = (hooks: PromiseHooks) => {
  if (!capture.on) return () => {};
  const init = hooks.init;
  return createHook({
    ...hooks,
    init: (promise, parent) => {
      // The sandbox has its own Promise; the worker's own promises cost the hook almost nothing.
      if (promise.constructor !== Promise) capture.sandboxPromises++;
      init?.(promise, parent);
    },
  });
};

const SIDES = ['plainCalls', 'toolplaneCalls'] as const;
type Side = (typeof SIDES)[number];
/** What `--json` prints: sandbox promises and replay µs per call, each side, with the SDK's stack capture on and off. */
export interface PromiseFigures {
  calls: number;
  /** What each further call adds: (promises of 2N calls - promises of N calls) / N. */
  promisesPerCall: Record<Side, number>;
  /** What a run costs once, besides its calls (the opening, the end). */
  promisesPerRun: Record<Side, number>;
  microsPerCall: Record<'on' | 'off', Record<Side, number>>;
}
interface Replayed {
  micros: Record<Side, number>;
  /** Sandbox promises of the N-call run and of the 2N-call run. */
  promises: Record<Side, [number, number]>;
}

/** The histories recorded for a side: N calls, then 2N. */
const historyFile = (dir: string, side: Side, double: boolean) => path.join(dir, `${side}${double ? '-2n' : ''}.json`);

/** In a child: replays each history once to warm up, then once measured; µs of CPU and sandbox promises per call. */
async function replayChild(dir: string, calls: number): Promise<Replayed> {
  const bundle = { code: fs.readFileSync(path.join(dir, 'bundle.js'), 'utf8') };
  const read = (side: Side, double: boolean) =>
    historyFromJSON(JSON.parse(fs.readFileSync(historyFile(dir, side, double), 'utf8')));
  const out: Replayed = {
    micros: { plainCalls: 0, toolplaneCalls: 0 },
    promises: { plainCalls: [0, 0], toolplaneCalls: [0, 0] },
  };
  for (const side of SIDES)
    await Worker.runReplayHistory({ workflowBundle: bundle }, read(side, false), `${side}-warm-up`);
  for (const side of SIDES) {
    capture.sandboxPromises = 0;
    const before = process.cpuUsage();
    await Worker.runReplayHistory({ workflowBundle: bundle }, read(side, false), `${side}-replay`);
    const used = process.cpuUsage(before);
    out.micros[side] = (used.user + used.system) / calls;
    out.promises[side][0] = capture.sandboxPromises;
    capture.sandboxPromises = 0;
    await Worker.runReplayHistory({ workflowBundle: bundle }, read(side, true), `${side}-replay-2n`);
    out.promises[side][1] = capture.sandboxPromises;
  }
  return out;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const o = new Command()
    .option('--calls <n>', 'calls per recorded run', '300')
    .option('--rounds <n>', 'replays per side and setting', '5')
    .option('--replay <dir>', '(internal) replay the histories in this directory')
    .option('--capture <on|off>', '(internal) the SDK promise hook in this child', 'on')
    .option('--json', 'print the figures as JSON (for `npm run bench`)')
    .parse(process.argv)
    .opts<{ calls: string; rounds: string; replay?: string; capture: string; json?: boolean }>();
  const calls = Number(o.calls);
  if (o.replay) {
    capture.on = o.capture === 'on';
    Runtime.install({ logger: new DefaultLogger('WARN') });
    process.stdout.write(JSON.stringify(await replayChild(o.replay, calls)) + '\n');
    return;
  }
  const server = await benchServer('promises');
  const { dir } = server;
  try {
    const manifest = loadManifest(path.resolve(__dirname, '..', 'examples', 'support-desk', 'manifest.yaml')).manifest;
    const decl = manifest.tools.find((t) => t.id === 'tool://crm/lookup_customer')!;
    const bundle = await benchBundle();
    const native = await NativeConnection.connect({ address: server.address });
    const client = new Client({ connection: await Connection.connect({ address: server.address }) });
    const taskQueue = `replay-${randomUUID()}`;
    const worker = await benchWorker({ connection: native, taskQueue, manifest, workflowBundle: bundle });
    await worker.runUntil(async () => {
      for (const side of SIDES)
        for (const double of [false, true]) {
          const workflowId = `${side}-${randomUUID()}`;
          await client.workflow.execute(side, {
            taskQueue,
            workflowId,
            args: [{ calls: double ? 2 * calls : calls, decl }],
          });
          const history = await client.workflow.getHandle(workflowId).fetchHistory();
          fs.writeFileSync(historyFile(dir, side, double), historyToJSON(history));
        }
    });
    fs.writeFileSync(path.join(dir, 'bundle.js'), bundle.code);
    await native.close();
    await client.connection.close();

    const runs: Record<'on' | 'off', Replayed[]> = { on: [], off: [] };
    for (let r = 0; r < Number(o.rounds); r++) {
      for (const setting of ['on', 'off'] as const) {
        const args = [...process.execArgv, __filename, '--replay', dir, '--calls', String(calls), '--capture', setting];
        const out = execFileSync(process.execPath, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
        runs[setting].push(JSON.parse(out.trim().split('\n').at(-1)!) as Replayed);
      }
    }
    const at = (setting: 'on' | 'off', side: Side) => median(runs[setting].map((x) => x.micros[side]));
    const counted = runs.on[0]!.promises;
    const perCall = (side: Side) => (counted[side][1] - counted[side][0]) / calls;
    const promisesPerCall = { plainCalls: perCall('plainCalls'), toolplaneCalls: perCall('toolplaneCalls') };
    const perRun = (side: Side) => counted[side][0] - calls * perCall(side);
    const promisesPerRun = { plainCalls: perRun('plainCalls'), toolplaneCalls: perRun('toolplaneCalls') };
    if (o.json) {
      const figures: PromiseFigures = {
        calls,
        promisesPerCall,
        promisesPerRun,
        microsPerCall: {
          on: { plainCalls: at('on', 'plainCalls'), toolplaneCalls: at('on', 'toolplaneCalls') },
          off: { plainCalls: at('off', 'plainCalls'), toolplaneCalls: at('off', 'toolplaneCalls') },
        },
      };
      process.stdout.write(JSON.stringify(figures) + '\n');
      return;
    }
    console.log(`replay CPU per call over ${calls}-call histories (median of ${o.rounds}, a child process each):`);
    for (const setting of ['on', 'off'] as const) {
      const [plain, tool] = [at(setting, 'plainCalls'), at(setting, 'toolplaneCalls')];
      console.log(
        `  stack capture ${setting.padEnd(3)}: plain ${plain.toFixed(0)} µs, callTool ${tool.toFixed(0)} µs, ratio ${(tool / plain).toFixed(3)}`,
      );
    }
    console.log(
      `  sandbox promises per further call: plain ${promisesPerCall.plainCalls.toFixed(2)}, callTool ${promisesPerCall.toolplaneCalls.toFixed(2)}` +
        `; once per run: plain ${promisesPerRun.plainCalls.toFixed(0)}, callTool ${promisesPerRun.toolplaneCalls.toFixed(0)}`,
    );
  } finally {
    await server.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
