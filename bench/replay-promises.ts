/**
 * Where replay CPU goes: the Temporal SDK captures a stack trace (mapped through the bundle's source
 * map) for every promise created inside the workflow sandbox. This records a plain and a callTool
 * run of the same calls, then replays both in child processes, alternating, with that capture on
 * (counting the sandbox's promises) and off. The SDK installs its hook once per process.
 *
 *   npx tsx bench/replay-promises.ts [--calls 300] [--rounds 5] [--json]
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import { Client, Connection } from '@temporalio/client';
import { historyFromJSON, historyToJSON } from '@temporalio/common/lib/proto-utils';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { Command } from 'commander';
import { loadManifest } from '../runtime/manifest-file';
import { createTools } from '../examples/support-desk/tools';
import { EAGER_ACTIVITIES, freePort, startDevServer } from '../scripts/dev-server';
import { createWorker } from '../worker';
import { createBenchActivities } from './activities';

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
  promisesPerCall: Record<Side, number>;
  microsPerCall: Record<'on' | 'off', Record<Side, number>>;
}
interface Replayed {
  micros: Record<Side, number>;
  promises: Record<Side, number>;
}

/** In a child: replays each history once to warm up, then once measured; µs of CPU and sandbox promises per call. */
async function replayChild(dir: string, calls: number): Promise<Replayed> {
  const bundle = { code: fs.readFileSync(path.join(dir, 'bundle.js'), 'utf8') };
  const histories = SIDES.map((side) =>
    historyFromJSON(JSON.parse(fs.readFileSync(path.join(dir, `${side}.json`), 'utf8'))),
  );
  const out: Replayed = {
    micros: { plainCalls: 0, toolplaneCalls: 0 },
    promises: { plainCalls: 0, toolplaneCalls: 0 },
  };
  for (const [i, side] of SIDES.entries())
    await Worker.runReplayHistory({ workflowBundle: bundle }, histories[i]!, `${side}-warm-up`);
  for (const [i, side] of SIDES.entries()) {
    capture.sandboxPromises = 0;
    const before = process.cpuUsage();
    await Worker.runReplayHistory({ workflowBundle: bundle }, histories[i]!, `${side}-replay`);
    const used = process.cpuUsage(before);
    out.micros[side] = (used.user + used.system) / calls;
    out.promises[side] = capture.sandboxPromises / calls;
  }
  return out;
}

const quiet = { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} };
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
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolplane-bench-'));
  process.env.TOOLPLANE_BLOB_DIR = path.join(dir, 'blobs');
  const server = await startDevServer({
    port: await freePort(),
    uiPort: await freePort(),
    dbFile: path.join(dir, 'temporal.sqlite'),
    log: () => {},
    dynamicConfig: EAGER_ACTIVITIES,
  });
  try {
    const manifest = loadManifest(path.resolve(__dirname, '..', 'examples', 'support-desk', 'manifest.yaml')).manifest;
    const decl = manifest.tools.find((t) => t.id === 'tool://crm/lookup_customer')!;
    const bundle = await bundleWorkflowCode({ workflowsPath: require.resolve('./workflows'), logger: quiet });
    const native = await NativeConnection.connect({ address: server.address });
    const client = new Client({ connection: await Connection.connect({ address: server.address }) });
    const taskQueue = `replay-${randomUUID()}`;
    const worker = await createWorker({
      connection: native,
      taskQueue,
      manifest,
      tools: createTools(),
      workflowBundle: bundle,
      activities: createBenchActivities(),
    });
    await worker.runUntil(async () => {
      for (const side of SIDES) {
        const workflowId = `${side}-${randomUUID()}`;
        await client.workflow.execute(side, { taskQueue, workflowId, args: [{ calls, decl }] });
        const history = await client.workflow.getHandle(workflowId).fetchHistory();
        fs.writeFileSync(path.join(dir, `${side}.json`), historyToJSON(history));
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
    if (o.json) {
      const figures: PromiseFigures = {
        calls,
        promisesPerCall: runs.on[0]!.promises,
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
    const promises = runs.on[0]!.promises;
    console.log(
      `  sandbox promises per call: plain ${promises.plainCalls.toFixed(1)}, callTool ${promises.toolplaneCalls.toFixed(1)}`,
    );
  } finally {
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
