// Workflow-safe: a subagent. A tool declared to run independently is performed by a child
// workflow of its own, one delegation level deeper, on its own lane; the gates already ran here.
import { executeChild, workflowInfo } from '@temporalio/workflow';
import { WorkflowName } from '../../common/names';
import type { Delegate } from '../call/perform';
import type { DelegatedCallInput, DelegatedCallResult } from '../delegated-call';
import { StepError } from '../step-error';

export function delegateTo(parent: {
  principal: string;
  capabilities?: readonly string[];
  manifestDigest?: string;
}): Delegate {
  return async (toolId, args, position) => {
    const childInput: DelegatedCallInput = {
      principal: parent.principal,
      toolId,
      args,
      capabilities: parent.capabilities ? [...parent.capabilities] : undefined,
      manifestDigest: parent.manifestDigest,
    };
    const child: DelegatedCallResult = await executeChild(WorkflowName.DelegatedCall, {
      workflowId: `${workflowInfo().workflowId}/delegated-${position}`,
      args: [childInput],
    });
    if (child.error) throw new StepError(child.error.code, child.error.message, child.error.rule);
    return child.output;
  };
}
