/**
 * toolplane/client: what a client process needs, and nothing else. Start a run, follow or stream it,
 * read its journal, answer the calls waiting for a person (approve, deny, decide; or in the AI SDK's
 * approval protocol), verify a ledger reference, sign the credentials of its own issuer, connect, and
 * the typed errors it may catch and the types of a run's input and result (which toolplane/workflow
 * does not export again). Loads no worker code. The rule and the surface: docs/entry-points.md;
 * `@experimental` marks what is new and may still change in a minor release.
 *
 * @module toolplane/client
 */
import { DEFAULT_TASK_QUEUE } from './common/names';
import { follow } from './inspect/follow';
import type { EffectView } from './inspect/journal';
import type { AgentRunInput, AgentRunResult } from './workflows/agent/run';
import type { EscalationDecision, PendingEscalation } from './workflows/escalation';
import type { ToolRunInput, ToolRunResult } from './workflows/tool-run';

// Start a run: its input and result, and what refuses it before it starts.
export { startAgentRun, startToolRun, type StartOptions } from './inspect/start-run';
export { DEFAULT_TASK_QUEUE };
export type { AgentRunInput, AgentRunResult, ToolRunInput, ToolRunResult };
export type { ModelRequest } from './catalog/authority';
export { RunInputInvalid, type RunInputProblem } from './catalog/errors';
export { SearchAttributesMissing } from './inspect/search-attributes';

// Follow it, read its journal.
export { follow as followRun };
export { readJournal } from './inspect/journal';
export type { EffectView };
export type { JournalSummary } from './workflows/journal-summary';

// Stream it (experimental).
export { streamRun, type StreamRunOptions, type StreamedEvent } from './inspect/stream-run';
export type {
  RunEvent,
  EffectEvent,
  CallRef,
  CallEventBase,
  TokensEvent,
  TurnCompletedEvent,
  CallDecidedEvent,
  CallLandedEvent,
  CallRefusedEvent,
  CallFailedEvent,
  CallEscalatedEvent,
  EscalationDecidedEvent,
  ApprovalRequestedEvent,
  ApprovalDecidedEvent,
  RunCompletedEvent,
  RunEndedEvent,
} from './common/run-events';

// Answer the calls waiting for a person; a refused answer is an update failure of type DECISION_REJECTED.
export { pendingDecisions, decide, approve, deny, confirm, reject, type DecisionOptions } from './inspect/decisions';
export type { EscalationDecision, PendingEscalation };
export { DECISION_REJECTED, DecisionRejectedReason } from './workflows/escalation';

// The same in the AI SDK's tool approval protocol (experimental).
export {
  approvalRequests,
  respondToApprovals,
  ApprovalResponseRefused,
  ApprovalResponseRefusedReason,
  type ApprovalResponseInput,
  type ApprovalResponseOptions,
  type ApprovalCredential,
  type ApprovalAnswered,
} from './inspect/approval-protocol';
export { approvalRequestOf, approvalRequestChunks, type ApprovalAsked } from './common/approval-request';

// Credentials of the client's own issuer (a run's principal, an approver).
export { generateIssuerKey, signCredential, type IssuerKey, type CredentialClaims } from './identity/mint';
export { runInputBinding } from './common/input-binding';

// Verify what a run's ledger signed (experimental).
export {
  verifyProducedBy,
  type LedgerVerdict,
  type LedgerOrigin,
  type LedgerInvalidReason,
  type VerifyOptions,
} from './ledger/verify';
export { loadLedgerKeyFile, LedgerKeyInvalid, type LedgerPublicKeys } from './ledger/keys';

// The connection.
export {
  connectClient,
  connectionSettings,
  TemporalUnreachable,
  type ConnectionSettings,
  type ConnectionFlags,
} from './inspect/connection';
