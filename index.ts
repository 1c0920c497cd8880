// toolplane (worker side): the plugin for your own `Worker.create({ plugins })`, the tool seam,
// tool errors, the blob store, and manifests.
export { ToolplanePlugin, type ToolplanePluginOptions, type ToolplaneDeployment } from './plugin';
export type { WorkflowTracing } from './activities/telemetry';
export type {
  Ctx,
  Tool,
  ToolDef,
  ToolEvent,
  ToolOrigin,
  ToolOutput,
  LedgerRef,
  Reconciliation,
  CarriedContent,
} from './activities/tool';
export {
  ToolError,
  ToolRejected,
  ToolFailedLanded,
  ToolInDoubt,
  Cancelled,
  ProvenanceMissing,
} from './activities/tool-errors';
export type { CitedOrigin } from './activities/tool-activities';
export type { RemainingBudget } from './workflows/limits';
export {
  LedgerSigner,
  LedgerKeyInvalid,
  generateLedgerKey,
  loadLedgerKeyFile,
  type LedgerConfig,
  type LedgerPublicKeys,
} from './ledger/keys';
export { FileBlobStore, BlobStoreUnwritable, type BlobStore } from './activities/blob-store';
export {
  S3BlobStore,
  S3BlobStoreUnavailable,
  S3BlobStoreMisconfigured,
  type S3BlobStoreOptions,
} from './activities/s3-blob-store';
export { loadManifest, parseManifest, type LoadedManifest } from './catalog/manifest-file';
export type { Manifest, ManifestInput, ToolDecl, Sensitivity } from './catalog/manifest';
export type { ModelEndpointDecl, ModelsDecl, PrincipalDecl, PrincipalsDecl } from './catalog/authority';
export { ToolplaneError, CatalogError, ManifestInvalid, RegistryDrift } from './catalog/errors';
export { SearchAttributesMissing, searchAttributeCommand, checkSearchAttributes } from './inspect/search-attributes';
export { manifestDigest } from './catalog/digest';
export { DEFAULT_TASK_QUEUE } from './common/names';
export { WORKFLOWS_PATH as toolplaneWorkflowsPath } from './workflows/path';
