// The worker-side door: `new ToolplanePlugin({ manifest, tools })` in `Worker.create({ plugins })`
// contributes toolplane's activities and interceptors to a worker the user owns.
import type { ProviderV4 } from '@ai-sdk/provider';
import type { VersioningBehavior } from '@temporalio/common';
import { SimplePlugin } from '@temporalio/plugin';
import type { WorkerDeploymentOptions, WorkerOptions } from '@temporalio/worker';
import type { Manifest } from './catalog/manifest';
import { createAuthorizeActivities } from './activities/authorize';
import { createDecisionActivities } from './activities/identity/approvers';
import { createBudgetActivities } from './activities/budget';
import { createCarriedActivities } from './activities/carried';
import { FileBlobStore, type BlobStore } from './activities/blob-store';
import { createExtensionTools } from './activities/extensions/deferred-extension-tool';
import { ExtensionManager } from './activities/extensions/extension-manager';
import { createMcpTools, verifyMcpServers } from './activities/mcp/mcp-tools';
import { createModelActivities } from './activities/model';
import { aiSdkModelGuard, governedModelProvider } from './activities/model/governed-provider';
import { activityTracing, workflowSpanSinks, type WorkflowTracing } from './activities/telemetry';
import type { Tool } from './activities/tool';
import { createToolActivities } from './activities/tool-activities';
import { ToolRegistry } from './activities/tool-registry';
import { ToolplaneError } from './catalog/errors';
import { checkSearchAttributes } from './inspect/search-attributes';
import type { LedgerConfig } from './ledger/keys';
import { CredentialVerifier, type IdentityConfig } from './identity/credentials';
import { loadTicketKey, TicketIssuer } from './activities/identity/tickets';
import { WORKFLOW_INTERCEPTOR_MODULES } from './runtime/workflow-modules';
import { ErrorCode } from './catalog/error-codes';

/**
 * Temporal Worker Versioning: the version of a worker deployment this worker is. Each deploy whose
 * workflow code differs gets a new `buildId`; making it current (`temporal worker deployment
 * set-current-version`) sends new runs to it, while a running run stays on the version it started on.
 */
export interface ToolplaneDeployment {
  /** The worker deployment, shared by every version of one fleet (such as `support-desk`); no `.` or `:`. */
  deploymentName: string;
  /** This worker's version within the deployment (such as a commit or image tag). */
  buildId: string;
  /**
   * The versioning behavior of every workflow on this worker that declares none of its own, toolplane's
   * included (they declare none, so that unversioned workers can run them). Default PINNED: a run
   * finishes on the version that started it. AUTO_UPGRADE moves running runs to each new current
   * version, so every change to their commands needs a patch (docs/versioning.md).
   */
  defaultVersioningBehavior?: VersioningBehavior;
}

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
  /**
   * Who may act through this worker: the issuers whose JWTs it verifies. With it, a run must carry a
   * credential (bound to its workflow id) and its principal is the token's subject; an approval must
   * carry the approver's. A worker whose manifest declares principals refuses runs without it, unless
   * `insecureAssertedPrincipals`.
   */
  identity?: IdentityConfig;
  /** Take a run's principal on its word, although the manifest declares principals (tests, local work only). */
  insecureAssertedPrincipals?: boolean;
  /**
   * The key this worker makes run tickets with (base64url or hex, at least 32 bytes). Every worker of a
   * task queue needs the same one. Default: `TOOLPLANE_TICKET_KEY`, else `ticket.key` in the data
   * directory (`TOOLPLANE_DATA_DIR` or `.data`), made on first use.
   */
  ticketKey?: string;
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
  /**
   * Run as a version of a Temporal worker deployment (Worker Versioning): the plugin sets the worker's
   * `workerDeploymentOptions`. Without it the worker is unversioned, as Temporal's default.
   */
  deployment?: ToolplaneDeployment;
}

/** Declared approvers are verified subjects: a worker that verifies nobody could only take a name's word. */
function refuseApproversWithoutIdentity(opts: ToolplanePluginOptions): void {
  if (opts.manifest.approvers && !opts.identity)
    throw new ToolplaneError(
      ErrorCode.IdentityConfigInvalid,
      "the manifest declares approvers, but this worker has no identity (issuers) to verify an approver's credential with; " +
        'configure identity, or remove the approvers section',
    );
}

/** Every activity toolplane contributes to the worker, built from its options and what the plugin made of them. */
function toolplaneActivities(
  opts: ToolplanePluginOptions,
  made: {
    registry: ToolRegistry;
    tickets: TicketIssuer;
    credentials: CredentialVerifier | undefined;
    blobs: BlobStore;
  },
) {
  const { registry, tickets, credentials, blobs } = made;
  return {
    ...createAuthorizeActivities({
      manifest: opts.manifest,
      tickets,
      credentials,
      insecureAssertedPrincipals: opts.insecureAssertedPrincipals,
      allowUngovernedToolRun: opts.allowUngovernedToolRun,
    }),
    ...createToolActivities({
      registry,
      manifest: opts.manifest,
      tickets,
      ledger: opts.ledger,
      blobs,
      largeOutputBytes: opts.largeOutputBytes,
    }),
    ...createCarriedActivities({ registry, manifest: opts.manifest, tickets }),
    ...createDecisionActivities({ manifest: opts.manifest, credentials }),
    ...createBudgetActivities({ manifest: opts.manifest, tickets }),
    ...createModelActivities({ models: opts.manifest.models, blobs, transcripts: opts.transcripts, tickets }),
  };
}

/**
 * The worker's `workerDeploymentOptions` for a deployment version; refuses names Temporal would
 * reject only once the worker polls (server 1.29: no `.` or `:` in a deployment name, neither
 * field empty or starting with `__`).
 */
export function workerDeploymentOptions(d: ToolplaneDeployment): WorkerDeploymentOptions {
  const bad = (what: string, value: string): string | undefined =>
    typeof value !== 'string' || value.trim() === ''
      ? `${what} is empty`
      : value.startsWith('__')
        ? `${what} ${JSON.stringify(value)} starts with "__", which Temporal reserves`
        : value !== value.trim()
          ? `${what} ${JSON.stringify(value)} has leading or trailing spaces`
          : undefined;
  const problem =
    bad('the deployment name', d.deploymentName) ??
    (/[.:]/.test(d.deploymentName)
      ? `the deployment name ${JSON.stringify(d.deploymentName)} contains "." or ":", which Temporal refuses`
      : undefined) ??
    bad('the build id', d.buildId);
  if (problem) throw new ToolplaneError(ErrorCode.UsageError, `worker deployment: ${problem}`);
  const behavior = d.defaultVersioningBehavior ?? 'PINNED';
  if (behavior !== 'PINNED' && behavior !== 'AUTO_UPGRADE')
    throw new ToolplaneError(
      ErrorCode.UsageError,
      `worker deployment: defaultVersioningBehavior ${JSON.stringify(behavior)} is neither PINNED nor AUTO_UPGRADE`,
    );
  return {
    version: { deploymentName: d.deploymentName, buildId: d.buildId },
    useWorkerVersioning: true,
    defaultVersioningBehavior: behavior,
  };
}

export class ToolplanePlugin extends SimplePlugin {
  readonly extensions: ExtensionManager;
  /** Where this worker keeps large outputs. */
  readonly blobs: BlobStore;
  private readonly activityFns: Record<string, unknown>;
  private readonly tickets: TicketIssuer;
  private verified: Promise<void> | undefined;

  /**
   * @throws RegistryDrift when the tools disagree with the manifest: the worker must not start.
   * @throws IdentityConfigInvalid (a ToolplaneError) when the manifest declares approvers and `identity` is not set.
   */
  constructor(private readonly opts: ToolplanePluginOptions) {
    const log = opts.log ?? ((l: string) => console.error(l));
    const extensions = opts.extensions ?? new ExtensionManager(opts.manifest, log);
    const registry = new ToolRegistry([
      ...(opts.tools ?? []),
      ...createMcpTools(opts.manifest, log),
      ...createExtensionTools(opts.manifest, extensions),
    ]);
    registry.assertMatches(opts.manifest);
    if (opts.deployment) workerDeploymentOptions(opts.deployment); // a bad name refuses here, before the worker exists
    const blobs = opts.blobs ?? new FileBlobStore();
    const tickets = new TicketIssuer(loadTicketKey(opts.ticketKey));
    refuseApproversWithoutIdentity(opts);
    const credentials = opts.identity ? new CredentialVerifier(opts.identity) : undefined;
    const activities = toolplaneActivities(opts, { registry, tickets, credentials, blobs });
    super({
      name: 'toolplane',
      activities,
      workerInterceptors: {
        // The guard refuses @temporalio/ai-sdk's model activities for a call without the run's permit.
        activity: [aiSdkModelGuard({ models: opts.manifest.models, tickets }), activityTracing],
        workflowModules: WORKFLOW_INTERCEPTOR_MODULES,
      },
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
    this.tickets = tickets;
  }

  /**
   * The model provider for @temporalio/ai-sdk's plugin on this worker, so the AI SDK path reaches only
   * the endpoints the manifest declares, for principals it lets use them: a workflow names
   * `<endpoint>/<model>` through toolplane/ai-sdk's `governedModel(step, id)`, which presents the run's
   * ticket; each call is checked by the worker before anything is sent (`ModelRefused` otherwise).
   *
   * @example
   * ```ts
   * const plugin = new ToolplanePlugin({ manifest, tools });
   * await Worker.create({ ..., plugins: [plugin, new AiSdkPlugin({ modelProvider: plugin.modelProvider() })] });
   * ```
   */
  modelProvider(options: { providers?: Readonly<Record<string, ProviderV4>> } = {}): ProviderV4 {
    return governedModelProvider({ models: this.opts.manifest.models, tickets: this.tickets, ...options });
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
        ErrorCode.ActivityConflict,
        `the worker's own activities ${own.join(', ')} have the names of toolplane's; rename them`,
      );
    const configured = super.configureWorker({
      ...options,
      ...this.deploymentOptions(options),
      sinks: { ...workflowSpanSinks(this.opts.tracing), ...options.sinks },
    });
    const registered = (configured.activities ?? {}) as Record<string, unknown>;
    const missing = Object.keys(this.activityFns).filter((name) => registered[name] !== this.activityFns[name]);
    if (missing.length > 0)
      throw new ToolplaneError(ErrorCode.ActivityConflict, `another plugin replaced toolplane's ${missing.join(', ')}`);
    if (!configured.interceptors?.activity?.includes(activityTracing))
      throw new ToolplaneError(
        ErrorCode.ActivityConflict,
        "the worker's options dropped toolplane's activity interceptor",
      );
    return configured;
  }

  /** The plugin's deployment version; the worker's own options may repeat it, never name another. */
  private deploymentOptions(options: WorkerOptions): Pick<WorkerOptions, 'workerDeploymentOptions'> {
    if (!this.opts.deployment) return {};
    const ours = workerDeploymentOptions(this.opts.deployment);
    const theirs = options.workerDeploymentOptions;
    const same =
      !theirs ||
      (theirs.useWorkerVersioning &&
        theirs.version.deploymentName === ours.version.deploymentName &&
        theirs.version.buildId === ours.version.buildId &&
        theirs.defaultVersioningBehavior === ours.defaultVersioningBehavior);
    if (!same)
      throw new ToolplaneError(
        ErrorCode.DeploymentConflict,
        `the worker's own workerDeploymentOptions (${JSON.stringify(theirs)}) differ from the plugin's deployment ` +
          `(${JSON.stringify(ours)}); set one of them`,
      );
    if (options.useVersioning || (options.buildId !== undefined && options.buildId !== ours.version.buildId))
      throw new ToolplaneError(
        ErrorCode.DeploymentConflict,
        "the worker's buildId/useVersioning (the deprecated build-id versioning) cannot be combined with the plugin's deployment",
      );
    return { workerDeploymentOptions: ours };
  }
}
