// Path 2 of the AgentDojo harness: a team's own workflow over StepCtx, making a task's calls in order
// with the task's prompt as what the principal gave the run, each as a model it called chose it. No gate of its own: the manifest's rules
// govern it as they govern agentRun. A refused call is recorded and the workflow goes on, as the
// scripted model goes on after a refusal.
import { StepCtx, StepError, type JournalEntry } from '../../workflow';

export interface DojoOwnInput {
  principal: string;
  /** The task's prompt: the principal's words, as `StepCtx.open({ given })` takes them. */
  given: string;
  calls: { toolId: string; args: unknown }[];
  /** The tools the host narrowed the run to (the actions the user asked for); absent: every granted tool. */
  grants?: string[];
  /** The principal's run credential, on a worker with an identity. */
  credential?: string;
}

export async function dojoOwnCalls(input: DojoOwnInput): Promise<{ journal: JournalEntry[] }> {
  const step = await StepCtx.open({
    principal: input.principal,
    given: input.given,
    ...(input.grants ? { grants: input.grants } : {}),
    input,
    ...(input.credential ? { credential: input.credential } : {}),
  });
  for (const c of input.calls) {
    try {
      // The calls are the scripted model's, passed through: judged as its, never as this code's own words.
      await step.callTool(c.toolId, c.args, { fromModel: true });
    } catch (err) {
      if (!StepError.is(err)) {
        step.ended(err);
        throw err;
      }
    }
  }
  step.releaseLeases();
  return { journal: step.ordered() };
}
