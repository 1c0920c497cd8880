/**
 * A worker of toolplane's own workflows with the plugin, on one task queue (`createWorker`); the
 * `toolplane worker` command line that runs one is cli/worker-run.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Worker, type NativeConnection, type WorkerOptions } from '@temporalio/worker';
import { DEFAULT_TASK_QUEUE } from './common/names';
import { WORKFLOWS_PATH } from './runtime/workflow-modules';
import { ToolplanePlugin, type ToolplanePluginOptions } from './plugin';
import { checkSearchAttributes } from './inspect/search-attributes';

export interface ToolplaneWorkerOptions extends ToolplanePluginOptions {
  connection: NativeConnection;
  namespace?: string;
  taskQueue?: string;
  /** A prebuilt workflow bundle; otherwise the one built with the package, or `workflows/` bundled here. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  /** Extra activities beside toolplane's (test doubles). */
  activities?: Record<string, (...args: never[]) => Promise<unknown>>;
  workerOptions?: Partial<WorkerOptions>;
}

/** How long a shutting-down worker lets running calls finish, and when it stops waiting for them at all. */
export const SHUTDOWN_GRACE_TIME = process.env.TOOLPLANE_SHUTDOWN_GRACE_TIME ?? '10s';
export const SHUTDOWN_FORCE_TIME = process.env.TOOLPLANE_SHUTDOWN_FORCE_TIME ?? '30s';

/** Built by `npm run build` beside the compiled workflows, so a CLI worker does not bundle at every start. */
export function prebuiltBundle(): { codePath: string } | undefined {
  const codePath = path.join(__dirname, 'workflow-bundle.js');
  return fs.existsSync(codePath) ? { codePath } : undefined;
}

/** A worker running toolplane's own workflows with the plugin; checks MCP sources before it returns. */
export async function createWorker(opts: ToolplaneWorkerOptions): Promise<Worker> {
  const { connection, namespace, taskQueue, workflowBundle, activities, workerOptions, ...pluginOptions } = opts;
  // Checked here, before anything else (a refused start leaves nothing registered behind), not again in Worker.create.
  const plugin = new ToolplanePlugin({ ...pluginOptions, checkSearchAttributes: false });
  if (pluginOptions.checkSearchAttributes !== false)
    await checkSearchAttributes(connection.operatorService, namespace ?? 'default');
  // A store it cannot write would fail calls only after their tools ran: refuse to start instead.
  await plugin.blobs.check?.();
  await plugin.verifySources();
  const bundle = workflowBundle ?? prebuiltBundle();
  return Worker.create({
    connection,
    namespace: namespace ?? 'default',
    taskQueue: taskQueue ?? DEFAULT_TASK_QUEUE,
    ...(bundle ? { workflowBundle: bundle } : { workflowsPath: WORKFLOWS_PATH }),
    plugins: [plugin],
    ...(activities ? { activities } : {}),
    // A tool that ignores its cancellation signal cannot hold a shutdown (SIGTERM, a deploy) forever.
    shutdownGraceTime: SHUTDOWN_GRACE_TIME as '10s',
    shutdownForceTime: SHUTDOWN_FORCE_TIME as '30s',
    ...workerOptions,
  });
}
