// Workflow-safe: one governed call performed as a subagent, in its own workflow and lane. The gates
// ran in the parent; so this workflow runs only as a child, never when a client starts it.
import { ApplicationFailure, workflowInfo } from '@temporalio/workflow';
import { StepCtx } from './step-ctx';
import { StepError, type StepErrorCode } from './step-error';
import type { TicketCarry } from '../common/ticket';

export interface DelegatedCallInput {
  toolId: string;
  args: Record<string, unknown>;
  /** The parent's ticket; the worker checks it against the parent Temporal names, not this input. */
  carry: TicketCarry;
  manifestDigest?: string;
}

export interface DelegatedCallResult {
  output?: unknown;
  error?: { code: StepErrorCode; message: string; rule?: string };
}

export async function delegatedCall(input: DelegatedCallInput): Promise<DelegatedCallResult> {
  const parent = workflowInfo().parent;
  if (!parent || !workflowInfo().workflowId.startsWith(`${parent.workflowId}/delegated-`)) {
    throw ApplicationFailure.nonRetryable(
      'delegatedCall runs only as the child of a governed run; start agentRun or toolRun instead',
      'DelegationRefused',
    );
  }
  // The worker decides again: the parent's ticket, checked against the parent Temporal names, for this one tool.
  const step = await StepCtx.open({
    carry: input.carry,
    grants: [input.toolId],
    capabilities: input.carry?.capabilities,
    manifestDigest: input.manifestDigest,
  });
  try {
    const output = await step.callTool(input.toolId, input.args);
    return { output };
  } catch (err) {
    if (!StepError.is(err)) {
      step.ended(err);
      throw err;
    }
    return { error: { code: err.code, message: err.message, ...(err.rule ? { rule: err.rule } : {}) } };
  } finally {
    step.releaseLeases();
  }
}
