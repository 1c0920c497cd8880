/**
 * toolplane/client: start runs, follow them, read their journal, answer the people-in-the-loop
 * questions. Loads no worker code, so it also owns what a worker process shares with clients (the
 * search attribute check, ledger key files, the default task queue) and the types of a run's input
 * and result and of an escalation, which toolplane/workflow does not export again.
 *
 * @module toolplane/client
 */
import { DEFAULT_TASK_QUEUE } from './common/names';
import { follow } from './inspect/follow';
import { formatEffects, type EffectView } from './inspect/journal';
import type { AgentRunInput, AgentRunResult } from './workflows/agent/run';
import type { EscalationDecision, PendingEscalation } from './workflows/escalation';
import type { ToolRunInput, ToolRunResult } from './workflows/tool-run';

export { startAgentRun, startToolRun, type StartOptions } from './inspect/start-run';
export { readJournal } from './inspect/journal';
export { pendingDecisions, decide, approve, deny, type DecisionOptions } from './inspect/decisions';
export { follow as followRun, formatEffects };
export { streamRun, type StreamRunOptions, type StreamedEvent } from './inspect/stream-run';
export {
  RunTopic,
  type CallRef,
  type CallEventBase,
  type RunEvent,
  type EffectEvent,
  type TokensEvent,
  type TurnCompletedEvent,
  type CallDecidedEvent,
  type CallLandedEvent,
  type CallRefusedEvent,
  type CallFailedEvent,
  type CallEscalatedEvent,
  type EscalationDecidedEvent,
  type ApprovalRequestedEvent,
  type ApprovalDecidedEvent,
  type RunCompletedEvent,
  type RunEndedEvent,
} from './common/run-events';
export {
  approvalRequests,
  respondToApprovals,
  approvalResponsesOf,
  ApprovalResponseRefused,
  ApprovalResponseRefusedReason,
  type ApprovalResponseInput,
  type ApprovalResponseOptions,
  type ApprovalCredential,
  type ApprovalAnswered,
} from './inspect/approval-protocol';
export { approvalRequestOf, approvalRequestChunks, approvalIdOf, type ApprovalAsked } from './common/approval-request';
export {
  runUrl,
  probe,
  TemporalUnreachable,
  connectionSettings,
  connectOptions,
  connectClient,
  type ConnectionSettings,
  type ConnectionFlags,
} from './inspect/connection';
export {
  verifyProducedBy,
  formatVerdict,
  type LedgerVerdict,
  type LedgerOrigin,
  type LedgerInvalidReason,
  type VerifyOptions,
} from './ledger/verify';
export { loadLedgerKeyFile, LedgerKeyInvalid, type LedgerPublicKeys } from './ledger/keys';
export { argsDigest } from './ledger/ref';
export { DEFAULT_TASK_QUEUE };
export { RunInputInvalid } from './catalog/errors';
export { generateIssuerKey, signCredential, type IssuerKey, type CredentialClaims } from './identity/mint';
export { WORKFLOW_ID_CLAIM } from './identity/credentials';
export { SearchAttributesMissing, checkSearchAttributes, searchAttributeCommand } from './inspect/search-attributes';
export { agentRunInputProblems, toolRunInputProblems } from './common/run-input';
export type { RunInputProblem } from './catalog/errors';
export type {
  AgentRunInput,
  AgentRunResult,
  ToolRunInput,
  ToolRunResult,
  EscalationDecision,
  PendingEscalation,
  EffectView,
};
export { DECISION_REJECTED, DecisionRejectedReason } from './workflows/escalation';
export type { ModelRequest } from './catalog/authority';
export type { JournalSummary } from './workflows/journal-summary';
