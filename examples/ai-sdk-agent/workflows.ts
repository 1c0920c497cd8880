// Workflow code. A @temporalio/ai-sdk agent: `generateText` in the workflow, the model called through
// Temporal activities. It is governed by its tool definitions and its model: `governedTools` instead of
// hand-written AI SDK tools whose `execute` called activities, and `governedModel` (an endpoint the
// worker declares, under the run's ticket) instead of `temporalProvider.languageModel` (see README.md).
import { generateText, stepCountIs } from 'ai';
import { governedModel, governedTools } from 'toolplane/ai-sdk';
import { StepCtx, type JournalEntry, type Limits, type Usage } from 'toolplane/workflow';
import type { ScriptedTurn } from './scripted-model';

export interface AiSdkAgentInput {
  prompt: string;
  principal?: string;
  /** The run's credential (a JWT bound to its workflow id), on a worker that verifies identities. */
  credential?: string;
  /** Tools the run asks for; the worker's manifest decides what it gets. */
  grants?: string[];
  manifestDigest?: string;
  /** A model endpoint the worker declares, as `<endpoint>/<model>` (or `<endpoint>`: its first model). */
  model: string;
  maxSteps?: number;
  limits?: Limits;
  /** For the worker's scripted model (tests and the demo): the turns it plays. */
  script?: ScriptedTurn[];
}

export interface AiSdkAgentResult {
  text: string;
  steps: number;
  /** Every tool call, allowed or refused: what `toolplane show` lists. */
  journal: JournalEntry[];
  /** Tool calls, egress and spend counted against the run's limits (model turns are `generateText`'s). */
  usage: Usage;
}

export async function aiSdkAgent(input: AiSdkAgentInput): Promise<AiSdkAgentResult> {
  // What this run may reach, and whether its principal may use the endpoint, is the worker's answer.
  const [endpoint, ...model] = input.model.split('/');
  const step = await StepCtx.open({
    principal: input.principal,
    credential: input.credential,
    grants: input.grants,
    manifestDigest: input.manifestDigest,
    model: { endpoint: endpoint!, ...(model.length ? { model: model.join('/') } : {}) },
  });
  const { tools, journal, budget } = governedTools(step, { prompt: input.prompt, limits: input.limits });

  const result = await generateText({
    model: governedModel(step, input.model),
    prompt: input.prompt,
    tools,
    stopWhen: stepCountIs(input.maxSteps ?? 12),
    ...(input.script ? { providerOptions: { scripted: { script: input.script } } } : {}),
  });
  return { text: result.text, steps: result.steps.length, journal: journal(), usage: budget.usage };
}
