// The worker-side door: `new ToolplanePlugin({ manifest, tools })` in `Worker.create({ plugins })`
// contributes toolplane's activities and interceptors to a worker the user owns. Its options and the
// activities it builds from them are runtime/plugin-options.ts; Worker Versioning is runtime/deployment.ts.
import type { ProviderV4 } from '@ai-sdk/provider';
import { SimplePlugin } from '@temporalio/plugin';
import type { BundleOptions, WorkerOptions } from '@temporalio/worker';
import { FileBlobStore, type BlobStore } from './activities/blob-store';
import { createExtensionTools } from './activities/extensions/deferred-extension-tool';
import { ExtensionManager } from './activities/extensions/extension-manager';
import { createMcpTools, verifyMcpServers } from './activities/mcp/mcp-tools';
import { aiSdkModelGuard, governedModelProvider } from './activities/model/governed-provider';
import { activityTracing, workflowSpanSinks } from './activities/telemetry';
import { ToolRegistry } from './activities/tool-registry';
import { ToolplaneError } from './catalog/errors';
import { checkSearchAttributes } from './inspect/search-attributes';
import { CredentialVerifier } from './identity/credentials';
import { loadTicketKey, TicketIssuer } from './activities/identity/tickets';
import { WORKFLOW_INTERCEPTOR_MODULES, WORKFLOW_PRELOAD_MODULES } from './runtime/workflow-modules';
import { ErrorCode } from './catalog/error-codes';
import { workerDeploymentOptions } from './runtime/deployment';
import {
  refuseApproversWithoutIdentity,
  toolplaneActivities,
  type ToolplanePluginOptions,
} from './runtime/plugin-options';

export { workerDeploymentOptions, type ToolplaneDeployment } from './runtime/deployment';
export type { ToolplanePluginOptions } from './runtime/plugin-options';

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

  /** A bundle made for this worker shares toolplane's hashing across its workflows (`WORKFLOW_PRELOAD_MODULES`). */
  override configureBundler(options: BundleOptions): BundleOptions {
    const configured = super.configureBundler(options);
    const preload = configured.preloadModules ?? [];
    return {
      ...configured,
      preloadModules: [...preload, ...WORKFLOW_PRELOAD_MODULES.filter((m) => !preload.includes(m))],
    };
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
