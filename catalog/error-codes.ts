// Workflow-safe: the registry of every `code` a ToolplaneError carries. Callers branch on these,
// never on message text; a code that is not here does not type-check. The failure types a tool, a
// model turn or a step reports are codes too: they are registered in failure-types.ts and step codes
// below, and ToolplaneCode unites them.
import { RunFailureType, type FailureType, type ModelFailureType } from './failure-types';

export const ErrorCode = {
  // The manifest and the catalog.
  ManifestInvalid: 'ManifestInvalid',
  Unreachable: 'Unreachable',
  InvalidArguments: 'InvalidArguments',
  RegistryDrift: 'RegistryDrift',
  DigestMismatch: 'DigestMismatch',
  /** A run asked for what the worker does not declare. */
  RunRefused: RunFailureType.RunRefused,
  /** A run named a model endpoint, or a model, the worker does not declare. */
  ModelRefused: RunFailureType.ModelRefused,
  /** A run's input is malformed; nothing was started. */
  RunInputInvalid: RunFailureType.RunInputInvalid,
  /** A value the gate must read exactly (an amount, a payee, a destination, a duration) could not be read. */
  ValueUnreadable: 'ValueUnreadable',
  // Identity and the ledger.
  /** The worker refused a credential. */
  IdentityRefused: RunFailureType.IdentityRefused,
  IdentityConfigInvalid: 'IdentityConfigInvalid',
  TicketKeyInvalid: 'TicketKeyInvalid',
  /** A key file or key that is not an Ed25519 key of the expected shape. */
  LedgerKeyInvalid: 'LedgerKeyInvalid',
  // The worker and its host.
  UsageError: 'UsageError',
  DeploymentConflict: 'DeploymentConflict',
  ActivityConflict: 'ActivityConflict',
  ToolSchemaUnrepresentable: 'ToolSchemaUnrepresentable',
  /** A call names an extension the manifest does not declare. */
  ExtensionUndeclared: 'ExtensionUndeclared',
  /** The run's conversation, kept by the worker, cannot be read. */
  TranscriptUnavailable: RunFailureType.TranscriptUnavailable,
  // Stored content.
  BlobNotFound: 'BlobNotFound',
  /** A string that is no blob reference (`sha256:` and 64 hex digits). */
  BlobRefInvalid: 'BlobRefInvalid',
  /** A stored blob whose content no longer hashes to its reference. */
  BlobCorrupt: 'BlobCorrupt',
  BlobStoreUnwritable: 'BlobStoreUnwritable',
  S3BlobStoreUnavailable: 'S3BlobStoreUnavailable',
  S3BlobStoreMisconfigured: 'S3BlobStoreMisconfigured',
  // Clients and the CLI.
  TemporalUnreachable: 'TemporalUnreachable',
  SearchAttributesMissing: 'SearchAttributesMissing',
  RunNotFound: 'RunNotFound',
  RunFinished: 'RunFinished',
  DecisionRefused: 'DecisionRefused',
  /** A budget workflow refused an operator's release (no reservation held, or the worker did not take the credential). */
  BudgetReleaseRefused: 'BudgetReleaseRefused',
  ApprovalResponseRefused: 'ApprovalResponseRefused',
  StreamBroken: 'StreamBroken',
  CommandFailed: 'CommandFailed',
  /** An MCP session whose run ended (deleted, idled out): the client re-initializes. */
  SessionEnded: 'SessionEnded',
  /** A new MCP session refused: its principal already holds as many open sessions as the gateway allows. */
  SessionLimit: 'SessionLimit',
  /** An MCP call the session cannot read (no key, no tool, no MAC), or a key reused for another call. */
  McpCallInvalid: 'McpCallInvalid',
  KeyReused: 'KeyReused',
  /** A call key older than the keys a session remembers: its outcome is in the run's journal. */
  KeyForgotten: 'KeyForgotten',
  /** An MCP request the gateway refuses at the HTTP door (a bad header, an unknown method on 2026-07-28). */
  McpRequestRefused: 'McpRequestRefused',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** How a tool step ends when it does not produce output (`StepError`'s code). */
export const StepErrorCode = {
  Unreachable: 'Unreachable',
  InvalidArguments: 'InvalidArguments',
  Refused: 'Refused',
  InDoubt: 'InDoubt',
  Failed: 'Failed',
  Aborted: 'Aborted',
  LimitExceeded: 'LimitExceeded',
  /** An extension tool called by a run without the extension-runtime lease capability. */
  LeaseMissing: 'LeaseMissing',
  /** The call landed, but the plane could not keep its output. */
  OutputLost: 'OutputLost',
} as const;
export type StepErrorCode = (typeof StepErrorCode)[keyof typeof StepErrorCode];

/** Every code a ToolplaneError may carry. */
export type ToolplaneCode = ErrorCode | StepErrorCode | FailureType | ModelFailureType | RunFailureType;
