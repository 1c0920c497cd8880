// Workflow-safe entry point (toolplane/workflow): import it from workflow code. Nothing here may
// touch Node or I/O; the workflow bundler checks.
export { agentRun, type AgentRunInput, type AgentRunResult } from './workflows/agent-run';
export { toolRun, type ToolRunInput, type ToolRunResult } from './workflows/tool-run';
export { delegatedCall, type DelegatedCallInput, type DelegatedCallResult } from './workflows/delegated-call';
export {
  StepCtx,
  type CallOptions,
  type Gate,
  type GateVerdict,
  type OpenRequest,
  type RunScope,
} from './workflows/step-ctx';
export { StepError, StepErrorCode } from './workflows/step-error';
export type { JournalEntry, Decision, Outcome, RecoveryPath } from './workflows/journal';
export { journalQuery } from './workflows/journal-query';
export {
  resolveEscalation,
  pendingEscalations,
  type EscalationDecision,
  type PendingEscalation,
} from './workflows/escalation';
export { governanceGate, type GovernedCall } from './workflows/governance';
export { Provenance, USER_PROMPT } from './workflows/provenance';
export { Budget, type Limits, type Usage } from './workflows/limits';
export {
  PRINCIPAL,
  MANIFEST_DIGEST,
  TOOLS_CALLED,
  REFUSALS,
  WAITING_FOR,
  WaitingFor,
  SEARCH_ATTRIBUTES,
} from './common/search-attributes';
export { isStoredHandle, type StoredHandle, type StoredOutput } from './common/stored-output';
export type { ModelRequest } from './catalog/authority';
export { ToolplaneError } from './catalog/errors';
