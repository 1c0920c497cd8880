// Workflow-safe: a subagent. A tool declared to run independently is performed by a child
// workflow of its own, one delegation level deeper, on its own lane; the gates already ran here.
import { executeChild, workflowInfo } from '@temporalio/workflow';
import { WorkflowName } from '../../common/names';
import type { TicketCarry } from '../../common/ticket';
import type { Delegate } from '../call/perform';
import type { DelegatedCallInput, DelegatedCallResult } from '../delegated-call';
import { StepError } from '../step-error';

/** The child shows the worker the parent's ticket; the worker grants it the one tool, never more than the parent's. */
export function delegateTo(parent: { carry: TicketCarry; manifestDigest?: string }): Delegate {
  return async (toolId, args, position) => {
    const childInput: DelegatedCallInput = {
      toolId,
      args,
      carry: parent.carry,
      ...(parent.manifestDigest ? { manifestDigest: parent.manifestDigest } : {}),
    };
    const child: DelegatedCallResult = await executeChild(WorkflowName.DelegatedCall, {
      workflowId: `${workflowInfo().workflowId}/delegated-${position}`,
      args: [childInput],
    });
    if (child.error) throw new StepError(child.error.code, child.error.message, child.error.rule);
    return child.output;
  };
}
