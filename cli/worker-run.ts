/**
 * The toolplane CLI worker (`toolplane worker …`): toolplane's own workflows and the plugin, on
 * one task queue. Refuses to start when its tool implementations disagree with the manifest.
 *
 *   toolplane worker --manifest examples/support-desk/manifest.yaml --tools examples/support-desk/tools
 *
 * With `--deployment-name` and `--build-id` it runs as one version of a Temporal worker deployment
 * (Worker Versioning); toolplane's workflows are pinned to the version that started them.
 */
import { Command } from 'commander';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { loadManifest } from '../runtime/manifest-file';
import { ToolplaneError } from '../catalog/errors';
import type { Manifest } from '../catalog/manifest';
import type { Tool } from '../activities/tool';
import { DEFAULT_TASK_QUEUE } from '../common/names';
import { workerDeploymentOptions, type ToolplaneDeployment } from '../runtime/deployment';
import { LedgerKeyInvalid, loadLedgerKeyFile, type LedgerConfig } from '../ledger/keys';
import { connectionSettings, connectOptions } from '../inspect/connection';
import { S3BlobStore } from '../activities/s3-blob-store';
import { loadIdentityFile } from '../activities/identity/identity-file';
import { ErrorCode } from '../catalog/error-codes';
import { createWorker, SHUTDOWN_FORCE_TIME, SHUTDOWN_GRACE_TIME } from '../worker';
import { loadToolModules } from './tool-modules';

/** Worker Versioning from the flags: both a deployment name and a build id, or neither. */
export function deploymentOf(o: { deploymentName?: string; buildId?: string }): ToolplaneDeployment | undefined {
  if (!o.deploymentName && !o.buildId) return undefined;
  if (!o.deploymentName || !o.buildId)
    throw new ToolplaneError(
      ErrorCode.UsageError,
      `Worker Versioning needs both a deployment name and a build id; only the ${o.buildId ? 'build id' : 'deployment name'} is set ` +
        '(--deployment-name / TOOLPLANE_DEPLOYMENT_NAME, --build-id / TOOLPLANE_BUILD_ID)',
    );
  const deployment = { deploymentName: o.deploymentName, buildId: o.buildId };
  workerDeploymentOptions(deployment); // refuses a name Temporal would refuse, before connecting
  return deployment;
}

/** The signing half of a ledger key file; a file with public keys only cannot sign. */
function ledgerSigning(file: string): LedgerConfig {
  const { signing } = loadLedgerKeyFile(file);
  if (!signing) throw new LedgerKeyInvalid(file, 'holds no keyId and privateKey, so this worker could not sign');
  return signing;
}

/**
 * Connects to Temporal; while the server is unreachable (not started yet, restarting, a network blip)
 * says so and tries again with backoff up to 10 s, instead of exiting with a transport error.
 * Resolves undefined when SIGINT or SIGTERM arrives while waiting.
 */
export async function connectWithRetry(
  options: Parameters<typeof NativeConnection.connect>[0],
  address: string,
  log: (line: string) => void = (l) => console.error(l),
): Promise<NativeConnection | undefined> {
  let stop: () => void = () => {};
  const stopped = new Promise<'stopped'>((r) => (stop = () => r('stopped')));
  const signals = ['SIGINT', 'SIGTERM'] as const;
  for (const s of signals) process.once(s, stop);
  try {
    for (let delayMs = 500, tries = 1; ; tries++, delayMs = Math.min(delayMs * 2, 10_000)) {
      try {
        const connection = await NativeConnection.connect(options);
        if (tries > 1) log(`[worker] connected to Temporal at ${address} after ${tries} attempts`);
        return connection;
      } catch (err) {
        log(
          `[worker] Temporal at ${address} is unreachable (${(err as Error).message.split('\n')[0]}); ` +
            `retrying in ${delayMs / 1000} s (attempt ${tries}; Ctrl-C to stop)`,
        );
      }
      let timer: NodeJS.Timeout | undefined;
      const waited = await Promise.race([
        stopped,
        new Promise<'again'>((r) => (timer = setTimeout(() => r('again'), delayMs))),
      ]);
      clearTimeout(timer);
      if (waited === 'stopped') {
        log('[worker] stopped before Temporal was reachable');
        return undefined;
      }
    }
  } finally {
    for (const s of signals) process.off(s, stop);
  }
}

/** The options `toolplane worker` takes. */
export interface WorkerCliOptions {
  manifest: string;
  tools: string[];
  taskQueue: string;
  address?: string;
  namespace?: string;
  profile?: string;
  workflowBundle?: string;
  allowUngovernedToolRun?: boolean;
  identity?: string;
  insecureAssertedPrincipals?: boolean;
  ledgerKeys?: string;
  deploymentName?: string;
  buildId?: string;
}

/** `toolplane worker`'s command line: each option, its environment default and its help. */
export function workerProgram(): Command {
  return new Command()
    .name('toolplane worker')
    .requiredOption(
      '--manifest <file>',
      'the manifest declaring every tool, principal and model endpoint this worker serves',
    )
    .option('--tools <module...>', 'modules exporting in-process tool implementations', [])
    .option('--task-queue <name>', 'task queue', process.env.TOOLPLANE_TASK_QUEUE ?? DEFAULT_TASK_QUEUE)
    .option('--address <host:port>', 'Temporal frontend (default: TEMPORAL_ADDRESS, the profile, 127.0.0.1:7233)')
    .option('--namespace <ns>', 'Temporal namespace (default: TEMPORAL_NAMESPACE, the profile, "default")')
    .option('--profile <name>', 'profile of the Temporal config file (default: TEMPORAL_PROFILE, "default")')
    .option(
      '--ledger-keys <file>',
      'a ledger key file ({ keyId, privateKey, publicKeys }) to sign produced_by with',
      process.env.TOOLPLANE_LEDGER_KEYS,
    )
    .option(
      '--identity <file>',
      'who may act: a JSON file { "issuers": [{ "issuer", "audience", "jwksFile" | "jwksUrl" | "jwks" }] } whose JWTs this ' +
        'worker verifies; runs and approvals then need credentials (default: TOOLPLANE_IDENTITY)',
      process.env.TOOLPLANE_IDENTITY,
    )
    .option(
      '--insecure-asserted-principals',
      "take a run's principal on its word although the manifest declares principals (tests and local work only; " +
        'default: TOOLPLANE_INSECURE_ASSERTED_PRINCIPALS=1)',
      process.env.TOOLPLANE_INSECURE_ASSERTED_PRINCIPALS === '1' || undefined,
    )
    .option('--allow-ungoverned-tool-run', 'serve toolRun, which has no data-flow gate (tests, internals)')
    .option(
      '--workflow-bundle <file>',
      'a prebuilt workflow bundle (skips bundling at start)',
      process.env.TOOLPLANE_WORKFLOW_BUNDLE,
    )
    .option(
      '--deployment-name <name>',
      'run as a version of this Temporal worker deployment (Worker Versioning; with --build-id) ' +
        '(default: TOOLPLANE_DEPLOYMENT_NAME, TEMPORAL_DEPLOYMENT_NAME)',
      process.env.TOOLPLANE_DEPLOYMENT_NAME || process.env.TEMPORAL_DEPLOYMENT_NAME || undefined,
    )
    .option(
      '--build-id <id>',
      "this worker's version in the deployment, new for each deploy that changes workflow code " +
        '(default: TOOLPLANE_BUILD_ID, TEMPORAL_WORKER_BUILD_ID)',
      process.env.TOOLPLANE_BUILD_ID || process.env.TEMPORAL_WORKER_BUILD_ID || undefined,
    );
}

/** The worker the options describe, on a connection already made. */
export function workerFromOptions(
  o: WorkerCliOptions,
  connection: NativeConnection,
  namespace: string,
  loaded: { manifest: Manifest; tools: Tool[]; deployment: ToolplaneDeployment | undefined },
): Promise<Worker> {
  const { manifest, tools, deployment } = loaded;
  return createWorker({
    connection,
    namespace,
    taskQueue: o.taskQueue,
    manifest,
    tools,
    // TOOLPLANE_S3_BUCKET (with TOOLPLANE_S3_ENDPOINT/PREFIX and the AWS credentials chain) puts large outputs in S3.
    blobs: process.env.TOOLPLANE_S3_BUCKET ? new S3BlobStore() : undefined,
    ledger: o.ledgerKeys ? ledgerSigning(o.ledgerKeys) : undefined,
    allowUngovernedToolRun: o.allowUngovernedToolRun === true,
    identity: o.identity ? loadIdentityFile(o.identity) : undefined,
    insecureAssertedPrincipals: o.insecureAssertedPrincipals === true,
    workflowBundle: o.workflowBundle ? { codePath: o.workflowBundle } : undefined,
    deployment,
    // How long a run waits on this worker's sticky queue before another worker takes it over
    // after a crash; the SDK's default is 10s.
    workerOptions: process.env.TOOLPLANE_STICKY_TIMEOUT
      ? { stickyQueueScheduleToStartTimeout: process.env.TOOLPLANE_STICKY_TIMEOUT as '1s' }
      : undefined,
  });
}

/** SIGINT or SIGTERM shuts the worker down gracefully: running calls get the grace time. */
export function shutdownOnSignals(worker: Worker): void {
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => {
      console.error(
        `[worker] ${signal}: shutting down; running calls get ${SHUTDOWN_GRACE_TIME}, then are cancelled; ` +
          `after ${SHUTDOWN_FORCE_TIME} the worker stops without them`,
      );
      worker.shutdown();
    });
}

export async function runWorkerCli(argv: string[]): Promise<void> {
  const o = workerProgram().parse(argv).opts<WorkerCliOptions>();
  const deployment = deploymentOf(o);
  const { manifest }: { manifest: Manifest } = loadManifest(o.manifest);
  const tools = await loadToolModules(o.tools);
  const settings = connectionSettings(o);
  const connection = await connectWithRetry(connectOptions(settings), settings.address);
  if (!connection) return; // told to stop while the server was unreachable
  const worker = await workerFromOptions(o, connection, settings.namespace, { manifest, tools, deployment });
  shutdownOnSignals(worker);
  const version = deployment
    ? ` as version ${deployment.buildId} of worker deployment ${deployment.deploymentName}`
    : ' (unversioned)';
  console.error(
    `[worker] pid ${process.pid} polling ${o.taskQueue} on ${settings.address} (namespace ${settings.namespace})${version} with ${tools.length} tools`,
  );
  try {
    await worker.run();
  } finally {
    await connection.close();
  }
}

if (require.main === module) {
  runWorkerCli(process.argv).catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
