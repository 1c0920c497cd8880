// toolplane/client: start runs, follow them, read their journal, answer the people-in-the-loop
// questions. Loads no worker code, so it also owns what a worker process shares with clients (the
// search attribute check, ledger key files, the default task queue) and the types of a run's input
// and result and of an escalation, which toolplane/workflow does not export again.
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { SearchAttributePair } from '@temporalio/common';
import type { Manifest } from './catalog/manifest';
import { DEFAULT_TASK_QUEUE, WorkflowName } from './common/names';
import { assertRunInput } from './common/run-input';
import { checkSearchAttributes } from './inspect/search-attributes';
import { MANIFEST_DIGEST, PRINCIPAL, REFUSALS, WAITING_FOR, WaitingFor } from './common/search-attributes';
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
 * Toolplane's search attributes for a run: who it asks to act for, the manifest it is pinned to, and
 * (so `toolplane list --refused/--waiting` can filter from the start) no refusals, waiting for nobody.
 * The principal and the manifest are the client's word until the run opens its StepCtx: the run then
 * labels itself with the worker's answer, and upserts it only where it differs from these.
 */
function searchAttributesOf(input: { principal: string; manifestDigest?: string }): SearchAttributePair[] {
  return [
    { key: PRINCIPAL, value: input.principal },
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
    workflowId: opts.workflowId ?? `agent-${randomUUID()}`,
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
    workflowId: opts.workflowId ?? `tools-${randomUUID()}`,
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

/** Answers a waiting call; the run refuses a decision that does not answer its question. */
export async function decide(client: Client, workflowId: string, decision: EscalationDecision): Promise<void> {
  await client.workflow.getHandle(workflowId).executeUpdate(resolveEscalation, { args: [decision] });
}

export async function approve(client: Client, workflowId: string, effectKey: string, by?: string): Promise<void> {
  await decide(client, workflowId, { effectKey, decision: 'approve', by });
}

export async function deny(
  client: Client,
  workflowId: string,
  effectKey: string,
  opts: { by?: string; reason?: string } = {},
): Promise<void> {
  await decide(client, workflowId, { effectKey, decision: 'deny', ...opts });
}

export { follow as followRun, formatEffects };
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
export type { ModelRequest } from './catalog/authority';
export type { JournalSummary } from './workflows/journal-summary';
