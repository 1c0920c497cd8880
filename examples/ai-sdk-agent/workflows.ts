// Workflow code. A @temporalio/ai-sdk agent: `generateText` in the workflow, the model called through
// Temporal activities. It is governed by its tool definitions alone: `governedTools` instead of
// hand-written AI SDK tools whose `execute` called activities (see README.md for the diff).
import { temporalProvider } from '@temporalio/ai-sdk/workflow';
import { generateText, stepCountIs } from 'ai';
import { governedTools } from 'toolplane/ai-sdk';
import { StepCtx, type JournalEntry, type Limits, type Usage } from 'toolplane/workflow';
import type { ScriptedTurn } from './scripted-model';

export interface AiSdkAgentInput {
  prompt: string;
  principal: string;
  /** Tools the run asks for; the worker's manifest decides what it gets. */
  grants?: string[];
  manifestDigest?: string;
  /** A model of the worker's AI SDK provider (`AiSdkPlugin({ modelProvider })`). */
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
  // The governed tool definitions: what this run may reach is the worker's answer, not the input's.
  const step = await StepCtx.open({
    principal: input.principal,
    grants: input.grants,
    manifestDigest: input.manifestDigest,
  });
  const { tools, journal, budget } = governedTools(step, { prompt: input.prompt, limits: input.limits });

  const result = await generateText({
    model: temporalProvider.languageModel(input.model),
    prompt: input.prompt,
    tools,
    stopWhen: stepCountIs(input.maxSteps ?? 12),
    ...(input.script ? { providerOptions: { scripted: { script: input.script } } } : {}),
  });
  return { text: result.text, steps: result.steps.length, journal: journal(), usage: budget.usage };
}
