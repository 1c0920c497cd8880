// What a test file needs to talk to the suite's dev server.
import fs from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, type Worker } from '@temporalio/worker';
import type { Manifest } from '../../catalog/manifest';
import { loadManifest } from '../../runtime/manifest-file';
import { createWorker, type ToolplaneWorkerOptions } from '../../worker';

export function testAddress(): string {
  const a = process.env.TOOLPLANE_TEST_ADDRESS;
  if (!a)
    throw new Error('TOOLPLANE_TEST_ADDRESS is not set: run through jest, whose global setup starts the dev server');
  return a;
}

export function testDir(name: string): string {
  const dir = fs.mkdtempSync(path.join(process.env.TOOLPLANE_TEST_DIR ?? '/tmp', `${name}-`));
  return dir;
}

export const EXAMPLE_MANIFEST = path.resolve(__dirname, '..', '..', 'examples', 'support-desk', 'manifest.yaml');

export function exampleManifest(): Manifest {
  return loadManifest(EXAMPLE_MANIFEST).manifest;
}

export interface Harness {
  client: Client;
  native: NativeConnection;
  taskQueue: string;
  startWorker(opts: WorkerSetup): Promise<Worker>;
  /** Starts a worker polling until `close()`, which shuts it down first. */
  runWorker(opts: WorkerSetup): Promise<Worker>;
  close(): Promise<void>;
}

type WorkerSetup = Omit<ToolplaneWorkerOptions, 'connection' | 'taskQueue'>;

export async function harness(taskQueue: string): Promise<Harness> {
  const connection = await Connection.connect({ address: testAddress() });
  const native = await NativeConnection.connect({ address: testAddress() });
  const client = new Client({ connection });
  const running: { worker: Worker; done: Promise<void> }[] = [];
  // toolRun, the durable call without the data-flow gate, is what most tests drive; a worker serves it only when told.
  const startWorker = (opts: WorkerSetup) =>
    createWorker({
      workflowBundle: { codePath: process.env.TOOLPLANE_TEST_BUNDLE! },
      allowUngovernedToolRun: true,
      // Most suites name their principals; the identity suites configure issuers and turn this off.
      insecureAssertedPrincipals: true,
      ...opts,
      connection: native,
      taskQueue,
    });
  return {
    client,
    native,
    taskQueue,
    startWorker,
    async runWorker(opts) {
      const worker = await startWorker(opts);
      running.push({ worker, done: worker.run() });
      return worker;
    },
    async close() {
      for (const r of running.splice(0)) {
        r.worker.shutdown();
        await r.done;
      }
      await connection.close();
      await native.close();
    },
  };
}
