// Node-only: what ToolplanePlugin (plugin.ts) is given, and the activities it builds from it.
import type { Manifest } from '../catalog/manifest';
import { createAuthorizeActivities } from '../activities/authorize';
import { createDecisionActivities } from '../activities/identity/approvers';
import { createBudgetActivities, createBudgetProofActivities } from '../activities/budget';
import { createCarriedActivities } from '../activities/carried';
import type { BlobStore } from '../activities/blob-store';
import type { ExtensionManager } from '../activities/extensions/extension-manager';
import { createModelActivities } from '../activities/model';
import type { WorkflowTracing } from '../activities/telemetry';
import type { Tool } from '../activities/tool';
import { createToolActivities } from '../activities/tool-activities';
import { createBaseBranchActivities } from '../activities/base-branch';
import type { ToolRegistry } from '../activities/tool-registry';
import { ToolplaneError } from '../catalog/errors';
import type { LedgerConfig } from '../ledger/keys';
import type { CredentialVerifier, IdentityConfig } from '../identity/credentials';
import type { TicketIssuer } from '../activities/identity/tickets';
import { ErrorCode } from '../catalog/error-codes';
import type { ToolplaneDeployment } from './deployment';

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
export function refuseApproversWithoutIdentity(opts: ToolplanePluginOptions): void {
  if (opts.manifest.approvers && !opts.identity)
    throw new ToolplaneError(
      ErrorCode.IdentityConfigInvalid,
      "the manifest declares approvers, but this worker has no identity (issuers) to verify an approver's credential with; " +
        'configure identity, or remove the approvers section',
    );
}

/** Every activity toolplane contributes to the worker, built from its options and what the plugin made of them. */
export function toolplaneActivities(
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
    ...createBaseBranchActivities(),
    ...createCarriedActivities({ registry, manifest: opts.manifest, tickets }),
    ...createDecisionActivities({ manifest: opts.manifest, credentials, tickets }),
    ...createBudgetActivities({ manifest: opts.manifest, tickets }),
    ...createBudgetProofActivities({ manifest: opts.manifest, tickets, credentials }),
    ...createModelActivities({
      models: opts.manifest.models,
      tools: opts.manifest.tools,
      blobs,
      transcripts: opts.transcripts,
      tickets,
    }),
  };
}
