// Workflow-side check of a run's input: a malformed one fails the run at once, typed and non-retryable,
// instead of throwing inside the workflow and failing its workflow task again and again.
import { ApplicationFailure } from '@temporalio/workflow';
import { RunInputInvalid } from '../catalog/errors';
import { agentRunInputProblems, RUN_INPUT_INVALID, toolRunInputProblems } from '../common/run-input';

export function refuseMalformedInput(workflow: 'agentRun' | 'toolRun', input: unknown): void {
  const problems = workflow === 'agentRun' ? agentRunInputProblems(input) : toolRunInputProblems(input);
  if (problems.length === 0) return;
  const err = new RunInputInvalid(workflow, problems);
  throw ApplicationFailure.create({
    type: RUN_INPUT_INVALID,
    message: err.message.replace(', nothing was started', ''),
    nonRetryable: true,
    details: [{ problems }],
  });
}
