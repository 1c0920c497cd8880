/**
 * The toolplane worker: runs agent workflows and performs their tool calls. Refuses to start when
 * its tool implementations disagree with the manifest.
 *
 *   tsx worker.ts --manifest examples/support-desk/manifest.yaml --tools examples/support-desk/tools
 */
import path from 'node:path';
import { Command } from 'commander';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { loadManifest } from './catalog/manifest-file';
import type { Manifest } from './catalog/manifest';
import type { Tool } from './activities/tool';
import { createToolActivities } from './activities/tool-activities';
import { ToolRegistry } from './activities/tool-registry';
import { activityTracing } from './activities/telemetry';
import { createModelActivities } from './activities/model';
import { FileBlobStore, type BlobStore } from './activities/blob-store';
import { createExtensionTools } from './activities/extensions/deferred-extension-tool';
import { ExtensionManager } from './activities/extensions/extension-manager';
import { createMcpTools, verifyMcpServers } from './activities/mcp/mcp-tools';

export const DEFAULT_TASK_QUEUE = 'toolplane';

export interface ToolplaneWorkerOptions {
  connection: NativeConnection;
  namespace?: string;
  taskQueue?: string;
  manifest: Manifest;
  tools: Tool[];
  ledgerSecret?: string;
  /** A prebuilt workflow bundle (tests share one); otherwise `workflows/` is bundled here. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  /** Extra activities beside the tool activities (model providers, test doubles). */
  activities?: Record<string, (...args: never[]) => Promise<unknown>>;
  workerOptions?: Partial<WorkerOptions>;
  /** Starts and stops `ext:` tools' extension processes; one is made if not given. */
  extensions?: ExtensionManager;
  /** Where large outputs go (default: a folder, TOOLPLANE_BLOB_DIR or .data/blobs). */
  blobs?: BlobStore;
  /** Outputs above this many bytes are stored outside history (default 256 KiB). */
  largeOutputBytes?: number;
  /** List every MCP server's tools at start and refuse definitions that changed (default true). */
  verifySources?: boolean;
  log?: (line: string) => void;
}

export const WORKFLOWS_PATH = require.resolve('./workflows');

export async function createWorker(opts: ToolplaneWorkerOptions): Promise<Worker> {
  const log = opts.log ?? ((l: string) => console.error(l));
  const extensions = opts.extensions ?? new ExtensionManager(opts.manifest, log);
  const registry = new ToolRegistry([...opts.tools, ...createMcpTools(opts.manifest, log), ...createExtensionTools(opts.manifest, extensions)]);
  registry.assertMatches(opts.manifest);
  const blobs = opts.blobs ?? new FileBlobStore();
  if (opts.verifySources !== false) await verifyMcpServers(opts.manifest, log);
  return Worker.create({
    connection: opts.connection,
    namespace: opts.namespace ?? 'default',
    taskQueue: opts.taskQueue ?? DEFAULT_TASK_QUEUE,
    ...(opts.workflowBundle ? { workflowBundle: opts.workflowBundle } : { workflowsPath: WORKFLOWS_PATH }),
    activities: {
      ...createToolActivities({ registry, manifest: opts.manifest, ledgerSecret: opts.ledgerSecret, blobs, largeOutputBytes: opts.largeOutputBytes }),
      ...createModelActivities({ blobs }), ...opts.activities },
    interceptors: { activity: [activityTracing] },
    ...opts.workerOptions,
  });
}

/** A tools module exports `createTools()`, a default export (array or factory), or `tools`. */
export async function loadToolModules(modules: string[]): Promise<Tool[]> {
  const tools: Tool[] = [];
  for (const m of modules) {
    const mod = (await import(path.resolve(m))) as Record<string, unknown>;
    const source = mod.createTools ?? mod.default ?? mod.tools;
    const loaded = typeof source === 'function' ? await (source as () => Tool[] | Promise<Tool[]>)() : source;
    if (!Array.isArray(loaded)) throw new Error(`${m} exports no tools (expected createTools(), a default export or \`tools\`)`);
    tools.push(...(loaded as Tool[]));
  }
  return tools;
}

async function main(argv: string[]): Promise<void> {
  const program = new Command()
    .name('worker')
    .requiredOption('--manifest <file>', 'the manifest declaring every tool this worker may perform')
    .option('--tools <module...>', 'modules exporting in-process tool implementations', [])
    .option('--task-queue <name>', 'task queue', process.env.TOOLPLANE_TASK_QUEUE ?? DEFAULT_TASK_QUEUE)
    .option('--address <host:port>', 'Temporal frontend', process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233')
    .option('--namespace <ns>', 'Temporal namespace', process.env.TEMPORAL_NAMESPACE ?? 'default')
    .option('--workflow-bundle <file>', 'a prebuilt workflow bundle (skips bundling at start)', process.env.TOOLPLANE_WORKFLOW_BUNDLE)
    .parse(argv);
  const o = program.opts<{ manifest: string; tools: string[]; taskQueue: string; address: string; namespace: string; workflowBundle?: string }>();
  const { manifest } = loadManifest(o.manifest);
  const tools = await loadToolModules(o.tools);
  const connection = await NativeConnection.connect({ address: o.address });
  const extensions = new ExtensionManager(manifest, (l) => console.error(l));
  const worker = await createWorker({
    extensions,
    connection,
    namespace: o.namespace,
    taskQueue: o.taskQueue,
    manifest,
    tools,
    ledgerSecret: process.env.TOOLPLANE_LEDGER_SECRET,
    workflowBundle: o.workflowBundle ? { codePath: o.workflowBundle } : undefined,
    // How long a run waits on this worker's sticky queue before another worker takes it over
    // after a crash; the SDK's default is 10s.
    workerOptions: process.env.TOOLPLANE_STICKY_TIMEOUT ? { stickyQueueScheduleToStartTimeout: process.env.TOOLPLANE_STICKY_TIMEOUT as '1s' } : undefined,
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => worker.shutdown());
  console.error(`[worker] pid ${process.pid} polling ${o.taskQueue} on ${o.address} with ${tools.length} tools`);
  try {
    await worker.run();
  } finally {
    await extensions.stopAll();
    await connection.close();
  }
}

if (require.main === module) {
  main(process.argv).catch((err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
