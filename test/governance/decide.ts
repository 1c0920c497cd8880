// Running a scripted agent, through agentRun or the AI SDK example, while a person answers every
// question it asks, in order.
import { randomUUID } from 'node:crypto';
import type { Manifest } from '../../catalog/manifest';
import type { AgentRunResult } from '../../workflows/agent/run';
import { pendingEscalations, resolveEscalation } from '../../workflows/escalation';
import type { AiSdkAgentResult } from '../../examples/ai-sdk-agent/workflows';
import type { ScriptedTurn } from '../../examples/ai-sdk-agent/scripted-model';
import { agentInput, runAgent, type Script } from '../support/agent';
import { aiSdkAgentInput } from '../support/ai-sdk-agent';
import type { Harness } from '../support/env';

export type Decision = 'approve' | 'deny';

/** The two ways an agent is run: toolplane's `agentRun`, and the AI SDK example (`generateText` with governed tools). */
export type AgentPath = 'agentRun' | 'aiSdk';

/** Where the AI SDK example's worker for this harness polls. */
export interface Paths {
  aiSdkTaskQueue?: string;
}

/**
 * Without decisions, a plain run. With them, each question gets the next one; past the list, `deny`.
 * `path` picks agentRun or the AI SDK example; both play the same script through the same gates.
 */
export async function runDeciding(
  h: Harness,
  manifest: Manifest,
  script: Script,
  decisions?: Decision[],
  path: AgentPath = 'agentRun',
  paths: Paths = {},
): Promise<{ result: AgentRunResult; asked: number }> {
  if (!decisions && path === 'agentRun') return { ...(await runAgent(h, manifest, script)), asked: 0 };
  const started =
    path === 'agentRun'
      ? { type: 'agentRun', input: agentInput(manifest, script) as unknown, taskQueue: h.taskQueue }
      : {
          type: 'aiSdkAgent',
          input: aiSdkAgentInput(manifest, { prompt: script.prompt, turns: script.turns as ScriptedTurn[] }) as unknown,
          taskQueue: paths.aiSdkTaskQueue!,
        };
  const handle = await h.client.workflow.start(started.type, {
    taskQueue: started.taskQueue,
    workflowId: `decide-${randomUUID()}`,
    args: [started.input],
  });
  let asked = 0;
  let done = false;
  const result = handle.result().finally(() => (done = true));
  while (!done && decisions) {
    const pending = await handle.query(pendingEscalations).catch(() => []);
    for (const p of pending) {
      const decision = decisions[asked++] ?? 'deny';
      await handle
        .executeUpdate(resolveEscalation, { args: [{ effectKey: p.effectKey, decision, by: 'supervisor' }] })
        .catch(() => undefined);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const out = (await result) as AgentRunResult | AiSdkAgentResult;
  if ('status' in out) return { result: out, asked };
  // The AI SDK agent ends when the model stops calling tools; its turns are the caller's to limit.
  return { result: { status: 'completed', answer: out.text, journal: out.journal, usage: out.usage }, asked };
}
