// What a test file needs to talk to the suite's dev server.
import fs from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, type Worker } from '@temporalio/worker';
import type { Manifest } from '../../catalog/manifest';
import { loadManifest } from '../../catalog/manifest-file';
import { createWorker, type ToolplaneWorkerOptions } from '../../worker';

export function testAddress(): string {
  const a = process.env.TOOLPLANE_TEST_ADDRESS;
  if (!a) throw new Error('TOOLPLANE_TEST_ADDRESS is not set: run through jest, whose global setup starts the dev server');
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
  startWorker(opts: Omit<ToolplaneWorkerOptions, 'connection' | 'taskQueue'>): Promise<Worker>;
  close(): Promise<void>;
}

export async function harness(taskQueue: string): Promise<Harness> {
  const connection = await Connection.connect({ address: testAddress() });
  const native = await NativeConnection.connect({ address: testAddress() });
  const client = new Client({ connection });
  return {
    client,
    native,
    taskQueue,
    startWorker: (opts) => createWorker({ workflowBundle: { codePath: process.env.TOOLPLANE_TEST_BUNDLE! }, ...opts, connection: native, taskQueue }),
    async close() {
      await connection.close();
      await native.close();
    },
  };
}
