// What every bench process runs its sides on: the bench workflows bundled as the package ships them,
// and a toolplane worker with the support desk's tools and the bench's own activities beside them.
import { bundleWorkflowCode, type NativeConnection, type WorkerOptions } from '@temporalio/worker';
import type { Manifest } from '../catalog/manifest';
import { createTools } from '../examples/support-desk/tools';
import { AS_SHIPPED } from '../scripts/workflow-bundle';
import { createWorker } from '../worker';
import { createBenchActivities } from './activities';

const quiet = { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} };

/** bench/workflows.ts (toolplane's workflows and the bench's baselines) in one bundle, at the shipped language level. */
export function benchBundle(): ReturnType<typeof bundleWorkflowCode> {
  return bundleWorkflowCode({ workflowsPath: require.resolve('./workflows'), logger: quiet, ...AS_SHIPPED });
}

export interface BenchWorkerOptions {
  connection: NativeConnection;
  taskQueue: string;
  manifest: Manifest;
  workflowBundle: Awaited<ReturnType<typeof bundleWorkflowCode>>;
  workerOptions?: Partial<WorkerOptions>;
}

/** A toolplane worker serving every bench side on `taskQueue`. */
export function benchWorker(o: BenchWorkerOptions): ReturnType<typeof createWorker> {
  return createWorker({ ...o, tools: createTools(), activities: createBenchActivities() });
}
