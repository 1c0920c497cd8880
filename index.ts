/**
 * toolplane (worker side): the plugin for your own `Worker.create({ plugins })`, the tool seam,
 * tool errors, the blob store, manifests, ledger signing, and ToolplaneError, the base of every
 * toolplane error. What a worker shares with clients (`loadLedgerKeyFile`, `DEFAULT_TASK_QUEUE`) is
 * toolplane/client's, which loads no worker code; docs/entry-points.md says which name goes where.
 *
 * @module toolplane
 */
export { ToolplanePlugin, type ToolplanePluginOptions, type ToolplaneDeployment } from './plugin';
export { createGateway, DEFAULT_MAX_ARGUMENT_BYTES, type Gateway, type GatewayOptions } from './gateway/gateway';
export type { WorkflowTracing } from './activities/telemetry';
export type { Ctx, Tool, ToolDef, ToolOrigin, ToolOutput, LedgerRef } from './activities/tool';
export {
  defineTool,
  deriveInputSchema,
  ToolSchemaUnrepresentable,
  type ToolSpec,
  type TypedTool,
  type ToolInputSchema,
} from './activities/define-tool';
export type { ToolEvent, Reconciliation, CarriedContent } from './common/wire';
export {
  ToolError,
  ToolRejected,
  ToolFailedLanded,
  ToolInDoubt,
  Cancelled,
  ProvenanceMissing,
  ToolInputInvalid,
} from './activities/tool-errors';
export type { RemainingBudget } from './common/wire';
export { LedgerSigner, generateLedgerKey, type LedgerConfig } from './ledger/keys';
export {
  IdentityRefused,
  type IdentityConfig,
  type IssuerConfig,
  type IdentityRefusedReason,
} from './identity/credentials';
export { loadIdentityFile } from './activities/identity/identity-file';
export { FileBlobStore, BlobStoreUnwritable, type BlobStore } from './activities/blob-store';
export {
  S3BlobStore,
  S3BlobStoreUnavailable,
  S3BlobStoreMisconfigured,
  type S3BlobStoreOptions,
} from './activities/s3-blob-store';
export { loadManifest, parseManifest, type LoadedManifest } from './runtime/manifest-file';
export type { Manifest, ManifestInput, ToolDecl, Sensitivity } from './catalog/manifest';
export type { ModelEndpointDecl, ModelsDecl, PrincipalDecl, PrincipalsDecl } from './catalog/authority';
export { ToolplaneError, CatalogError, ManifestInvalid, RegistryDrift, type ArgumentProblem } from './catalog/errors';
export { ErrorCode, type ToolplaneCode } from './catalog/error-codes';
export { manifestDigest } from './catalog/digest';
export { WORKFLOWS_PATH as toolplaneWorkflowsPath } from './runtime/workflow-modules';
