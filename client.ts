/**
 * toolplane/client: start runs, follow them, read their journal, answer the people-in-the-loop
 * questions. Loads no worker code, so it also owns what a worker process shares with clients (the
 * search attribute check, ledger key files, the default task queue) and the types of a run's input
 * and result and of an escalation, which toolplane/workflow does not export again.
 *
 * @module toolplane/client
 */
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { SearchAttributePair } from '@temporalio/common';
import type { Manifest } from './catalog/manifest';
import { RunInputInvalid } from './catalog/errors';
import { boundWorkflowId } from './identity/credentials';
import { DEFAULT_TASK_QUEUE, WorkflowName } from './common/names';
import { assertRunInput } from './common/run-input';
import { checkSearchAttributes } from './inspect/search-attributes';
import { MANIFEST_DIGEST, REFUSALS, WAITING_FOR, WaitingFor } from './common/search-attributes';
import { follow } from './inspect/follow';
import { formatEffects, loadEffects, type EffectView } from './inspect/journal';
import type { AgentRunInput, AgentRunResult } from './workflows/agent/run';
import {
  pendingEscalations,
  resolveEscalation,
  type EscalationDecision,
  type PendingEscalation,
} from './workflows/escalation';
import type { ToolRunInput, ToolRunResult } from './workflows/tool-run';

export interface StartOptions {
  taskQueue?: string;
  workflowId?: string;
  /**
   * The manifest the workers serve, when the caller has it: a grant it does not declare is refused here,
   * before anything starts. Without it only the input's shape is checked; the worker decides the rest.
   */
  manifest?: Manifest;
}

/**
 * The run's workflow id: the one its credential is bound to (`toolplane_workflow_id`), the one asked
 * for, or a fresh one. A credential bound to another id than the one asked for starts nothing.
 */
function workflowIdFor(
  workflow: 'agentRun' | 'toolRun',
  credential: string | undefined,
  asked: string | undefined,
  prefix: string,
): string {
  const bound = boundWorkflowId(credential);
  if (bound && asked && bound !== asked)
    throw new RunInputInvalid(workflow, [
      { path: 'credential', message: `is bound to workflow ${bound}, but the run is started as ${asked}` },
    ]);
  return bound ?? asked ?? `${prefix}-${randomUUID()}`;
}

/** Each client checks its namespace's search attributes once, before its first run. */
const checked = new WeakMap<Client, Promise<void>>();
function searchAttributesChecked(client: Client): Promise<void> {
  let check = checked.get(client);
  if (!check) {
    check = checkSearchAttributes(client.connection.operatorService, client.options.namespace);
    // A failed check (missing attributes, a network error) is asked again next time.
    check.catch(() => checked.delete(client));
    checked.set(client, check);
  }
  return check;
}

/**
 * Toolplane's search attributes for a run: the manifest it is pinned to, and (so `toolplane list
 * --refused/--waiting` can filter from the start) no refusals, waiting for nobody. Not the principal:
 * the run labels itself with the one the worker established, never with a client's word.
 */
function searchAttributesOf(input: { manifestDigest?: string }): SearchAttributePair[] {
  return [
    { key: REFUSALS, value: 0 },
    { key: WAITING_FOR, value: WaitingFor.None },
    ...(input.manifestDigest ? [{ key: MANIFEST_DIGEST, value: input.manifestDigest }] : []),
  ];
}

/**
 * Starts an agent run; the worker decides what it may reach. A malformed input (a bad deadline or turn
 * limit, a script of the wrong shape, a grant the given manifest does not declare) throws `RunInputInvalid`
 * and starts nothing; so does a namespace without toolplane's search attributes (`SearchAttributesMissing`,
 * naming the command that registers them).
 */
export async function startAgentRun(client: Client, input: AgentRunInput, opts: StartOptions = {}) {
  assertRunInput('agentRun', input, opts.manifest);
  await searchAttributesChecked(client);
  return client.workflow.start(WorkflowName.AgentRun, {
    taskQueue: opts.taskQueue ?? DEFAULT_TASK_QUEUE,
    workflowId: workflowIdFor('agentRun', input.credential, opts.workflowId, 'agent'),
    args: [input],
    typedSearchAttributes: searchAttributesOf(input),
    staticSummary: input.prompt.slice(0, 200),
  });
}

/**
 * Starts a fixed list of calls without the data-flow gate; only a worker configured with
 * `allowUngovernedToolRun` serves it, any other refuses the run.
 */
export async function startToolRun(client: Client, input: ToolRunInput, opts: StartOptions = {}) {
  assertRunInput('toolRun', input, opts.manifest);
  await searchAttributesChecked(client);
  return client.workflow.start(WorkflowName.ToolRun, {
    taskQueue: opts.taskQueue ?? DEFAULT_TASK_QUEUE,
    workflowId: workflowIdFor('toolRun', input.credential, opts.workflowId, 'tools'),
    args: [input],
    typedSearchAttributes: searchAttributesOf(input),
  });
}

/** Each effect of a run, read from its history (works for finished and running runs). */
export async function readJournal(
  client: Client,
  workflowId: string,
): Promise<{ status: string; effects: EffectView[] }> {
  const { status, effects } = await loadEffects(client, workflowId);
  return { status, effects };
}

/** Calls of a run that wait for a person: approvals and in-doubt outcomes. */
export async function pendingDecisions(client: Client, workflowId: string): Promise<PendingEscalation[]> {
  return client.workflow.getHandle(workflowId).query(pendingEscalations);
}

/**
 * Who answers, as a decision carries it. On a worker with an identity, `credential` (the approver's
 * own JWT) is required and the run records its verified subject as the decider; `by` may be left
 * out (given, it must be that subject). On a worker without identity, `by` is recorded as given.
 */
export interface DecisionOptions {
  /** Who decides: free text on a worker without identity; with one, left out or the credential's subject. */
  by?: string;
  /** The approver's own credential (a JWT from an issuer the worker trusts); required by a worker with an identity. */
  credential?: string;
  /** Why (recorded in the run; a denial shows it). */
  reason?: string;
}

/**
 * Answers a waiting call. The run refuses (`WorkflowUpdateFailedError` whose cause is a
 * `DecisionRejected` failure with `{ reason }` in its details) a decision that answers no waiting
 * question, or that no declared approver's valid credential carries; the call keeps waiting.
 * Resolves to whom the run recorded as deciding.
 */
export async function decide(
  client: Client,
  workflowId: string,
  decision: EscalationDecision,
): Promise<{ by?: string }> {
  const { by } = await client.workflow.getHandle(workflowId).executeUpdate(resolveEscalation, { args: [decision] });
  return by !== undefined ? { by } : {};
}

function who(opts: DecisionOptions): Pick<EscalationDecision, 'by' | 'credential'> {
  return {
    ...(opts.by !== undefined ? { by: opts.by } : {}),
    ...(opts.credential !== undefined ? { credential: opts.credential } : {}),
  };
}

/** An approval question's answer, as `approve` and `deny` give it. */
function answerApproval(
  client: Client,
  workflowId: string,
  effectKey: string,
  decision: 'approve' | 'deny',
  opts: DecisionOptions,
): Promise<{ by?: string }> {
  return decide(client, workflowId, {
    effectKey,
    decision,
    ...who(opts),
    ...(opts.reason ? { reason: opts.reason } : {}),
  });
}

/** Approves a call that waits for a person's approval (see `decide`). */
export async function approve(
  client: Client,
  workflowId: string,
  effectKey: string,
  opts: DecisionOptions = {},
): Promise<{ by?: string }> {
  return answerApproval(client, workflowId, effectKey, 'approve', opts);
}

/** Denies a call that waits for a person's approval (see `decide`). */
export async function deny(
  client: Client,
  workflowId: string,
  effectKey: string,
  opts: DecisionOptions = {},
): Promise<{ by?: string }> {
  return answerApproval(client, workflowId, effectKey, 'deny', opts);
}

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
