// Workflow-safe: a worker-declared model endpoint as an AI SDK language model, for workflows that call
// `generateText` themselves with @temporalio/ai-sdk. Each call goes through the plugin's model activity
// and carries the run's principal and the MAC of its ticket for the endpoint, which the worker's
// provider (`ToolplanePlugin.modelProvider()`) checks before it sends anything.
import type { LanguageModelV4, LanguageModelV4CallOptions } from '@ai-sdk/provider';
import { TemporalLanguageModel } from '@temporalio/ai-sdk/workflow';
import type { Duration } from '@temporalio/common';
import { ApplicationFailure, type ActivityOptions } from '@temporalio/workflow';
import { CatalogErrorCode } from '../catalog/errors';
import { RunTopic } from '../common/run-events';
import { MODEL_TICKET_OPTIONS, modelPermit, permitMac } from '../common/ticket';
import type { Budget } from './gate/limits';
import type { StepCtx } from './step-ctx';

/**
 * The model activity's options. `streamText` streams through the run's stream (the one its StepCtx
 * opened): the worker publishes the text as toolplane's `tokens` events, read with `streamRun`
 * (toolplane/client), and @temporalio/ai-sdk publishes the AI SDK's raw stream parts on
 * `streamingTopic` (default `toolplane.ai-sdk`).
 *
 * @experimental
 */
export type GovernedModelOptions = ActivityOptions & {
  /** Where @temporalio/ai-sdk publishes a streaming call's raw AI SDK parts (default `toolplane.ai-sdk`). */
  streamingTopic?: string;
  /** How often those parts are sent to the run (default 100 ms, @temporalio/ai-sdk's). */
  streamingBatchInterval?: Duration;
};

/** The failure type of an AI SDK model call refused by a limit (the run's own, or the worker's cap). */
export const LIMIT_REACHED = 'LimitReached';

/**
 * The run's model: `<endpoint>/<model>` (or `<endpoint>` for its first declared model) of the worker's
 * manifest. The run must have asked for the endpoint when it opened its StepCtx
 * (`StepCtx.open({ model: { endpoint } })`): the worker then decided its principal may use it, and
 * its ticket holds the permit each call presents. Without it the call is refused here, typed
 * (`ModelRefused`), before any activity is scheduled; the worker checks every call again.
 *
 * @example
 * ```ts
 * const step = await StepCtx.open({ credential, model: { endpoint: 'fast', model: 'gpt-5-mini' } });
 * const { tools } = governedTools(step, { prompt });
 * const { text } = await generateText({ model: governedModel(step, 'fast/gpt-5-mini'), prompt, tools });
 * ```
 *
 * @experimental
 */
export function governedModel(step: StepCtx, modelId: string, activity?: GovernedModelOptions): LanguageModelV4 {
  return budgetedModel(step, modelId, activity, undefined);
}

/**
 * `governedModel` whose calls also count against a run's budget (`governedTools(...).model(id)`): a
 * call past its turns, tokens, cost or deadline (the run's own or the worker's cap) is refused before
 * any activity, typed `LimitReached` with the rule (`limit:<name>` or `worker_limit:<name>`).
 */
export function budgetedModel(
  step: StepCtx,
  modelId: string,
  activity: GovernedModelOptions | undefined,
  budget: Budget | undefined,
): LanguageModelV4 {
  const slash = modelId.indexOf('/');
  const endpoint = slash < 0 ? modelId : modelId.slice(0, slash);
  // Streaming calls publish into the stream the run's StepCtx registered (there is one per run).
  const inner = new TemporalLanguageModel(modelId, { streamingTopic: RunTopic.AiSdkParts, ...activity });
  const withinBudget = (options: LanguageModelV4CallOptions): LanguageModelV4CallOptions => {
    const verdict = budget?.checkTurn(Date.now());
    if (verdict && !verdict.ok)
      throw ApplicationFailure.create({
        type: LIMIT_REACHED,
        message: verdict.reason,
        details: [{ rule: verdict.rule, reason: verdict.reason }],
        nonRetryable: true,
      });
    return options;
  };
  const withTicket = (options: LanguageModelV4CallOptions): LanguageModelV4CallOptions => {
    const ticket = permitMac(step.scope.ticket, modelPermit(endpoint));
    if (ticket === undefined)
      throw ApplicationFailure.create({
        type: CatalogErrorCode.ModelRefused,
        message:
          `${step.scope.principal}'s run holds no permit for model endpoint "${endpoint}": ` +
          'a run asks for its endpoint when it opens its StepCtx (StepCtx.open({ model: { endpoint } })), and the worker decides',
        details: [{ endpoint }],
        nonRetryable: true,
      });
    return {
      ...options,
      providerOptions: {
        ...options.providerOptions,
        [MODEL_TICKET_OPTIONS]: { principal: step.scope.principal, ticket },
      },
    };
  };
  return {
    specificationVersion: 'v4',
    provider: 'toolplane',
    modelId,
    supportedUrls: {},
    // Refused before any activity is scheduled: the budget and the ticket are read first.
    doGenerate: async (options) => {
      const result = await inner.doGenerate(withTicket(withinBudget(options)));
      budget?.chargeTurn({
        inputTokens: result.usage.inputTokens.total ?? 0,
        outputTokens: result.usage.outputTokens.total ?? 0,
      });
      return result;
    },
    // A stream's usage arrives with it; its turn is counted when it starts.
    doStream: async (options) => {
      const started = await inner.doStream(withTicket(withinBudget(options)));
      budget?.chargeTurn({ inputTokens: 0, outputTokens: 0 });
      return started;
    },
  };
}
