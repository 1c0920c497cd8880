// The team's own workflow module: its own workflow, plus toolplane's agent run.
import { StepCtx } from 'toolplane/workflow';
export { agentRun } from 'toolplane/workflow';

export async function saveTwoNotes(credential: string): Promise<unknown[]> {
  // The worker verifies who the credential is for and decides what that principal may reach; the workflow only asks.
  const step = await StepCtx.open({ credential, grants: ['tool://notes/save'] });
  const first = await step.callTool('tool://notes/save', { text: 'hello' });
  const refused = await step.callTool('tool://notes/delete_all', {}).catch((err: Error) => err.message);
  return [first, refused, step.ordered()];
}
