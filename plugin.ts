// The worker-side door: `new ToolplanePlugin({ manifest, tools })` in `Worker.create({ plugins })`
// contributes toolplane's activities and interceptors to a worker the user owns.
import { SimplePlugin } from '@temporalio/plugin';
import type { WorkerOptions } from '@temporalio/worker';
import type { Manifest } from './catalog/manifest';
import { createAuthorizeActivities } from './activities/authorize';
import { createCarriedActivities } from './activities/carried';
import { FileBlobStore, type BlobStore } from './activities/blob-store';
import { createExtensionTools } from './activities/extensions/deferred-extension-tool';
import { ExtensionManager } from './activities/extensions/extension-manager';
import { createMcpTools, verifyMcpServers } from './activities/mcp/mcp-tools';
import { createModelActivities } from './activities/model';
import { activityTracing, workflowSpanSinks, type WorkflowTracing } from './activities/telemetry';
import type { Tool } from './activities/tool';
import { createToolActivities } from './activities/tool-activities';
import { ToolRegistry } from './activities/tool-registry';
import { ToolplaneError } from './catalog/errors';
import { checkSearchAttributes } from './inspect/search-attributes';
import type { LedgerConfig } from './ledger/keys';
import { WORKFLOW_INTERCEPTOR_MODULES } from './runtime/workflow-modules';

export interface ToolplanePluginOptions {
  /** The worker's manifest: every tool, principal and model endpoint this worker may serve. */
  manifest: Manifest;
  /** In-process tool implementations; MCP and extension tools come from the manifest. */
  tools?: Tool[];
  /** Where outputs above `largeOutputBytes` go (default: `TOOLPLANE_BLOB_DIR`, or `.data/blobs` under `TOOLPLANE_DATA_DIR` or the working directory); `S3BlobStore` for replicas on different machines. */
  blobs?: BlobStore;
  /** Where model-turn transcripts go (default: `blobs`). Every worker of a task queue must read the same store. */
  transcripts?: BlobStore;
  /** Outputs above this many bytes are stored outside history (default 256 KiB). */
  largeOutputBytes?: number;
  /**
   * The ledger: the Ed25519 key (by id) this worker signs `produced_by` references with, and the
   * public keys it accepts when a tool cites an earlier reference (rotated-out keys stay here so
   * old facts keep verifying). Without it, `requires_ledger` tools fail closed and cited facts stay
   * untrusted. `loadLedgerKeyFile` reads one from a file.
   */
  ledger?: LedgerConfig;
  /** List every MCP server's tools before the worker runs and refuse definitions that changed (default true). */
  verifySources?: boolean;
  /** Serve `toolRun`, the workflow without a data-flow gate (tests, internals). Default false: such runs are refused. */
  allowUngovernedToolRun?: boolean;
  /** Starts and stops `ext:` tools' extension processes; one is made if not given. */
  extensions?: ExtensionManager;
  log?: (line: string) => void;
  /**
   * Where the runs' own spans go (`invoke_agent`, its model turns and tool calls as the workflow
   * sees them): the SDK's workflow interceptors hand them to this span processor through a sink.
   * Without it the activities' spans still share one trace per run; the workflow's are dropped.
   */
  tracing?: WorkflowTracing;
  /**
   * `Worker.create` (and `createWorker`) refuses when the namespace lacks toolplane's search
   * attributes, naming the command that registers them (default true): every run that opens a
   * StepCtx, of any workflow, labels itself with them, and a run that upserts an unregistered one is
   * stuck.
   */
  checkSearchAttributes?: boolean;
}

export class ToolplanePlugin extends SimplePlugin {
  readonly extensions: ExtensionManager;
  /** Where this worker keeps large outputs. */
  readonly blobs: BlobStore;
  private readonly activityFns: Record<string, unknown>;
  private verified: Promise<void> | undefined;

  /** @throws RegistryDrift when the tools disagree with the manifest: the worker must not start. */
  constructor(private readonly opts: ToolplanePluginOptions) {
    const log = opts.log ?? ((l: string) => console.error(l));
    const extensions = opts.extensions ?? new ExtensionManager(opts.manifest, log);
    const registry = new ToolRegistry([
      ...(opts.tools ?? []),
      ...createMcpTools(opts.manifest, log),
      ...createExtensionTools(opts.manifest, extensions),
    ]);
    registry.assertMatches(opts.manifest);
    const blobs = opts.blobs ?? new FileBlobStore();
    const activities = {
      ...createAuthorizeActivities({ manifest: opts.manifest, allowUngovernedToolRun: opts.allowUngovernedToolRun }),
      ...createToolActivities({
        registry,
        manifest: opts.manifest,
        ledger: opts.ledger,
        blobs,
        largeOutputBytes: opts.largeOutputBytes,
      }),
      ...createCarriedActivities({ registry, manifest: opts.manifest }),
      ...createModelActivities({ models: opts.manifest.models, blobs, transcripts: opts.transcripts }),
    };
    super({
      name: 'toolplane',
      activities,
      workerInterceptors: { activity: [activityTracing], workflowModules: WORKFLOW_INTERCEPTOR_MODULES },
      runContext: async (next) => {
        try {
          await this.verifySources();
          await next();
        } finally {
          await extensions.stopAll();
        }
      },
    });
    this.extensions = extensions;
    this.blobs = blobs;
    this.activityFns = activities;
  }

  /** Lists every MCP server's tools and refuses definitions that changed since the manifest (a rug pull). Runs once. */
  verifySources(): Promise<void> {
    if (this.opts.verifySources === false) return Promise.resolve();
    this.verified ??= verifyMcpServers(this.opts.manifest, this.opts.log ?? ((l: string) => console.error(l)));
    return this.verified;
  }

  /**
   * Toolplane's activities and interceptor, and the worker's own, are never silently replaced by one
   * another; and a worker is not created in a namespace without toolplane's search attributes.
   */
  override configureWorker(options: WorkerOptions): WorkerOptions {
    const configured = this.withToolplane(options);
    const connection = options.connection;
    if (this.opts.checkSearchAttributes === false || !connection) return configured;
    // `Worker.create` awaits this hook (a WorkerPlugin may answer with a promise, though SimplePlugin's
    // signature says otherwise): refused here, before the worker exists, nothing is left registered.
    return checkSearchAttributes(connection.operatorService, options.namespace ?? 'default').then(
      () => configured,
    ) as unknown as WorkerOptions;
  }

  private withToolplane(options: WorkerOptions): WorkerOptions {
    const own = Object.keys((options.activities ?? {}) as Record<string, unknown>).filter(
      (name) => name in this.activityFns,
    );
    if (own.length > 0)
      throw new ToolplaneError(
        'ActivityConflict',
        `the worker's own activities ${own.join(', ')} have the names of toolplane's; rename them`,
      );
    const configured = super.configureWorker({
      ...options,
      sinks: { ...workflowSpanSinks(this.opts.tracing), ...options.sinks },
    });
    const registered = (configured.activities ?? {}) as Record<string, unknown>;
    const missing = Object.keys(this.activityFns).filter((name) => registered[name] !== this.activityFns[name]);
    if (missing.length > 0)
      throw new ToolplaneError('ActivityConflict', `another plugin replaced toolplane's ${missing.join(', ')}`);
    if (!configured.interceptors?.activity?.includes(activityTracing))
      throw new ToolplaneError('ActivityConflict', "the worker's options dropped toolplane's activity interceptor");
    return configured;
  }
}
