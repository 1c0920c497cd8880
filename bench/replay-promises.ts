/**
 * Where replay CPU goes: the Temporal SDK captures a stack trace (mapped through the bundle's source
 * map) for every promise created inside the workflow sandbox. This records a plain and a callTool
 * run of the same calls, then replays each with that capture on (counting the sandbox's promises)
 * and off, alternating, in one process.
 *
 *   npx tsx bench/replay-promises.ts [--calls 300] [--rounds 5]
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import { Client, Connection } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { Command } from 'commander';
import { loadManifest } from '../catalog/manifest-file';
import { createTools } from '../examples/support-desk/tools';
import { EAGER_ACTIVITIES, freePort, startDevServer } from '../scripts/dev-server';
import { createWorker } from '../worker';
import { createBenchActivities } from './activities';

type PromiseHooks = Parameters<typeof v8.promiseHooks.createHook>[0];

/** Whether the next replay worker gets the SDK's promise hook, and how many sandbox promises it saw. */
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

const quiet = { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} };
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const o = new Command()
    .option('--calls <n>', 'calls per recorded run', '300')
    .option('--rounds <n>', 'replays per side and setting', '5')
    .parse(process.argv)
    .opts<{ calls: string; rounds: string }>();
  const calls = Number(o.calls);
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
    const sides = ['plainCalls', 'toolplaneCalls'];
    const histories: temporal.api.history.v1.IHistory[] = [];
    await worker.runUntil(async () => {
      for (const type of sides) {
        const workflowId = `${type}-${randomUUID()}`;
        await client.workflow.execute(type, { taskQueue, workflowId, args: [{ calls, decl }] });
        histories.push(await client.workflow.getHandle(workflowId).fetchHistory());
      }
    });
    await native.close();
    await client.connection.close();

    const micros: Record<string, number[]> = {};
    const promises: Record<string, number> = {};
    for (let r = 0; r < Number(o.rounds); r++) {
      for (const on of [true, false]) {
        for (const [i, type] of sides.entries()) {
          capture.on = on;
          capture.sandboxPromises = 0;
          const before = process.cpuUsage();
          await Worker.runReplayHistory({ workflowBundle: bundle }, histories[i]!, `${type}-replay`);
          const used = process.cpuUsage(before);
          (micros[`${type} ${on}`] ??= []).push((used.user + used.system) / calls);
          if (on) promises[type] = capture.sandboxPromises / calls;
        }
      }
    }
    const at = (type: string, on: boolean) => median(micros[`${type} ${on}`]!);
    console.log(`replay CPU per call over ${calls}-call histories (median of ${o.rounds}):`);
    for (const on of [true, false]) {
      console.log(
        `  stack capture ${on ? 'on ' : 'off'}: plain ${at('plainCalls', on).toFixed(0)} µs, callTool ` +
          `${at('toolplaneCalls', on).toFixed(0)} µs, ratio ${(at('toolplaneCalls', on) / at('plainCalls', on)).toFixed(3)}`,
      );
    }
    console.log(
      `  sandbox promises per call: plain ${promises.plainCalls!.toFixed(1)}, callTool ${promises.toolplaneCalls!.toFixed(1)}`,
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
