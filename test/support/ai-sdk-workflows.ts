// Workflow code for the AI SDK suites: the example agent, and a workflow that calls a model through
// @temporalio/ai-sdk's plugin as an attacker's (or a careless) workflow would, to show what the worker refuses.
import { temporalProvider } from '@temporalio/ai-sdk/workflow';
import { ActivityFailure, ApplicationFailure } from '@temporalio/workflow';
import type { JSONValue } from '@ai-sdk/provider';
import { generateText, streamText } from 'ai';
import { governedModel } from 'toolplane/ai-sdk';
import { StepCtx } from 'toolplane/workflow';
import { modelPermit, permitMac } from '../../common/ticket';

export { aiSdkAgent } from '../../examples/ai-sdk-agent/workflows';

export interface ModelCallInput {
  principal: string;
  /** `<endpoint>/<model>`. */
  modelId: string;
  /** Ask the worker for the endpoint when opening the StepCtx (so the ticket may hold its permit). */
  ask?: boolean;
  /** `governed`: toolplane's `governedModel`; `raw`: the plugin's own `temporalProvider`, presenting `presented`. */
  via: 'governed' | 'raw';
  presented?: { principal: string; ticket: string };
}

/** The answer, and the MAC this run's ticket holds for the endpoint (what a thief would copy from its history). */
export async function modelCall(input: ModelCallInput): Promise<{ text: string; mac?: string }> {
  const endpoint = input.modelId.split('/')[0]!;
  const step = await StepCtx.open({ principal: input.principal, ...(input.ask ? { model: { endpoint } } : {}) });
  try {
    const { text } = await generateText({
      model:
        input.via === 'governed' ? governedModel(step, input.modelId) : temporalProvider.languageModel(input.modelId),
      prompt: 'Say hello.',
      ...(input.presented ? { providerOptions: { toolplane: { ...input.presented } } } : {}),
    });
    return { text, mac: permitMac(step.scope.ticket, modelPermit(endpoint)) };
  } catch (err) {
    // The worker's refusal, as the run's own typed failure.
    const cause = err instanceof ActivityFailure ? err.cause : err;
    if (cause instanceof ApplicationFailure) throw ApplicationFailure.nonRetryable(cause.message, cause.type);
    throw err;
  }
}

/** A workflow of one's own that streams a governed model's answer with `streamText`; returns the text. */
export async function streamedModelCall(input: { principal: string; script: unknown[] }): Promise<{ text: string }> {
  const step = await StepCtx.open({ principal: input.principal, model: { endpoint: 'scripted' } });
  const result = streamText({
    model: governedModel(step, 'scripted/scripted'),
    prompt: 'Say hello.',
    providerOptions: { scripted: { script: input.script as JSONValue[] } },
  });
  return { text: await result.text };
}
