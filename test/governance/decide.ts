// Running a scripted agent while a person answers every question it asks, in order.
import { randomUUID } from 'node:crypto';
import type { Manifest } from '../../catalog/manifest';
import type { AgentRunResult } from '../../workflows/agent-run';
import { pendingEscalations, resolveEscalation } from '../../workflows/escalation';
import { agentInput, runAgent, type Script } from '../support/agent';
import type { Harness } from '../support/env';

export type Decision = 'approve' | 'deny';

/** Without decisions, a plain run. With them, each question gets the next one; past the list, `deny`. */
export async function runDeciding(
  h: Harness,
  manifest: Manifest,
  script: Script,
  decisions?: Decision[],
): Promise<{ result: AgentRunResult; asked: number }> {
  if (!decisions) return { ...(await runAgent(h, manifest, script)), asked: 0 };
  const input = agentInput(manifest, script);
  const handle = await h.client.workflow.start('agentRun', {
    taskQueue: h.taskQueue,
    workflowId: `decide-${randomUUID()}`,
    args: [input],
  });
  let asked = 0;
  let done = false;
  const result = handle.result().finally(() => (done = true));
  while (!done) {
    const pending = await handle.query(pendingEscalations).catch(() => []);
    for (const p of pending) {
      const decision = decisions[asked++] ?? 'deny';
      await handle
        .executeUpdate(resolveEscalation, { args: [{ effectKey: p.effectKey, decision, by: 'supervisor' }] })
        .catch(() => undefined);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { result: await result, asked };
}
