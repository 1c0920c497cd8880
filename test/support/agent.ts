// Running agent runs with a scripted model, the way the CLI does.
import fs from 'node:fs';
import { randomUUID } from 'node:crypto';
import type { ScriptTurn } from '../../common/wire';
import { manifestDigest } from '../../catalog/digest';
import type { Manifest } from '../../catalog/manifest';
import type { AgentRunInput, AgentRunResult } from '../../workflows/agent/run';
import type { Harness } from './env';

export interface Script {
  prompt: string;
  turns: ScriptTurn[];
}

export function loadScript(file: string): Script {
  return JSON.parse(fs.readFileSync(file, 'utf8'));
}

/**
 * The input a scripted test run sends: it asks for every declared tool and pins the manifest's digest.
 * The tests read each call's entry in the result, so it asks for every call there (`fullJournal`); a
 * test of the result's default, which counts routine calls, passes `fullJournal: false`
 * (test/integration/turn-calls.test.ts).
 */
export function agentInput(manifest: Manifest, script: Script, extra: Partial<AgentRunInput> = {}): AgentRunInput {
  return {
    prompt: script.prompt,
    principal: 'agent:test',
    grants: manifest.tools.map((t) => t.id),
    manifestDigest: manifestDigest(manifest),
    model: { endpoint: 'scripted', script: script.turns },
    fullJournal: true,
    ...extra,
  };
}

export async function runAgent(
  h: Harness,
  manifest: Manifest,
  script: Script,
  extra: Partial<AgentRunInput> = {},
): Promise<{ result: AgentRunResult; workflowId: string }> {
  const workflowId = `agent-${randomUUID()}`;
  const input = agentInput(manifest, script, extra);
  const result: AgentRunResult = await h.client.workflow.execute('agentRun', {
    taskQueue: h.taskQueue,
    workflowId,
    args: [input],
  });
  return { result, workflowId };
}
