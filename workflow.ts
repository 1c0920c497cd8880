/**
 * Workflow-safe entry point (toolplane/workflow): what a workflow author calls. Nothing here may
 * touch Node or I/O; the workflow bundler checks. The gate's parts (its verdicts, provenance, budgets)
 * stay inside: a call is governed through `StepCtx`, `agentRun` or toolplane/ai-sdk's `governedTools`.
 * Types a client also needs (a run's input and result, an escalation's question and answer) are
 * exported by toolplane/client, once; api/toolplane-workflow.api.md is the reviewed surface.
 *
 * @module toolplane/workflow
 */
export { agentRun } from './workflows/agent/run';
export { toolRun } from './workflows/tool-run';
// The MCP gateway's sessions: every worker that serves toolplane's runs registers the session workflow.
export { mcpSession, type McpSessionResult } from './workflows/mcp/session';
export {
  MCP_SESSION_WORKFLOW,
  mcpCallUpdate,
  mcpEndUpdate,
  mcpSessionWorkflowId,
  type McpCallOutcome,
  type McpCallRequest,
  type McpEndRequest,
  type McpMemoEntry,
  type McpSessionInput,
  type McpSessionState,
  type SessionPass,
} from './common/gateway-protocol';
export { SESSION_MESSAGE_REFUSED, SessionRefusedReason, type McpCallProof } from './common/session-proof';
// Budgets across runs: every worker that serves toolplane's runs registers the principals' budget workflow.
export { budgetCounter } from './workflows/budget/counter';
export { budgetWindowsQuery, releaseBudgetUpdate, settleBudgetUpdate } from './common/budget-protocol';
export type {
  BudgetCounterInput,
  BudgetState,
  CounterTotals,
  ReservationRecord,
  ReleaseAnswer,
  ReleaseUpdate,
  ReservationStatus,
  SettleUpdate,
  WindowState,
} from './common/budget-protocol';
export type { BudgetSeals } from './common/budget-proof';
export type { BudgetAnswer } from './common/budget-wire';
export { delegatedCall, type DelegatedCallInput, type DelegatedCallResult } from './workflows/delegated-call';
export { StepCtx, type CallOptions, type OpenRequest, type StepState } from './workflows/step-ctx';
export { StepError, StepErrorCode } from './workflows/step-error';
// The run's stream (what `streamRun` in toolplane/client reads): a workflow may publish topics of its own on it.
export { RunStream } from './workflows/run-stream';
export type { JournalEntry, Decision, Outcome, RecoveryPath, LeaseState } from './common/journal';
export type { Limits, Usage } from './workflows/gate/limits';
export type { Policy } from './catalog/policy';
export type { RunIdentity, TicketCarry } from './common/ticket';
export { isStoredHandle, type StoredHandle, type StoredOutput } from './common/stored-output';
// For clients of your own workflows: the run's journal, the calls waiting for a person, the answer.
export { journalQuery } from './workflows/journal-query';
export { resolveEscalation, pendingEscalations } from './workflows/escalation';
// Search attribute keys for your own workflows and list queries.
export {
  PRINCIPAL,
  MANIFEST_DIGEST,
  TOOLS_CALLED,
  REFUSALS,
  WAITING_FOR,
  WaitingFor,
} from './common/search-attributes';
