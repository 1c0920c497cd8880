// Workflow code. A @temporalio/ai-sdk agent: `generateText` in the workflow, the model called through
// Temporal activities. It is governed by its tool definitions and its model: `governedTools` instead of
// hand-written AI SDK tools whose `execute` called activities, and their `model` (an endpoint the
// worker declares, under the run's ticket and budget) instead of `temporalProvider.languageModel`.
import { generateText, stepCountIs } from 'ai';
import { governedTools } from 'toolplane/ai-sdk';
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
  /** Model turns, tokens, tool calls, egress and spend counted against the run's limits. */
  usage: Usage;
}

export async function aiSdkAgent(input: AiSdkAgentInput): Promise<AiSdkAgentResult> {
  // What this run may reach, and whether its principal may use the endpoint, is the worker's answer.
  const [endpoint, ...served] = input.model.split('/');
  const step = await StepCtx.open({
    principal: input.principal,
    credential: input.credential,
    // The credential acts only for this input: a start with other input under the same id is refused.
    input,
    grants: input.grants,
    manifestDigest: input.manifestDigest,
    model: { endpoint: endpoint!, ...(served.length ? { model: served.join('/') } : {}) },
  });
  // `model` is `governedModel(step, id)` counted against the same budget: turns and tokens too.
  const { tools, journal, budget, model } = governedTools(step, { prompt: input.prompt, limits: input.limits });

  const result = await generateText({
    model: model(input.model),
    prompt: input.prompt,
    tools,
    stopWhen: stepCountIs(input.maxSteps ?? 12),
    ...(input.script ? { providerOptions: { scripted: { script: input.script } } } : {}),
  });
  return { text: result.text, steps: result.steps.length, journal: journal(), usage: budget.usage };
}
