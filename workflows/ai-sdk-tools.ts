// Workflow-safe: a run's granted tools as AI SDK tools, for workflows that call the AI SDK's
// `generateText` themselves (with @temporalio/ai-sdk). Every `execute` goes through
// `StepCtx.callTool` with the same gate, labels and lanes as `agentRun`, so both decide alike.
import type { LanguageModelV4 } from '@ai-sdk/provider';
import type { ActivityOptions } from '@temporalio/workflow';
import { jsonSchema, tool, type Tool, type ToolExecutionOptions } from 'ai';
import type { Sensitivity } from '../catalog/manifest';
import type { OfferedTool } from '../catalog/tool-catalog';
import { isStoredHandle } from '../common/stored-output';
import { governedAgentCall } from './agent/governed-call';
import { budgetedModel } from './ai-sdk-model';
import type { JournalEntry } from '../common/journal';
import { laneOf } from './lanes';
import { Budget, type Limits } from './gate/limits';
import { Provenance, USER_PROMPT, type ProvenanceView } from './gate/provenance';
import type { StepCtx } from './step-ctx';

/** The governed tools take no context of the caller's: the run's StepCtx is theirs. */
type ToolContext = Record<string, unknown>;

/**
 * What `governedTools` governs a run's AI SDK calls with: the user's prompt, its sensitivity, the limits.
 *
 * @experimental
 */
export interface GovernedToolsOptions {
  /** The user's own words: the run's one trusted source. Pass exactly what the model is given as the prompt. */
  prompt: string;
  /** How sensitive the prompt is (default internal). */
  promptSensitivity?: Sensitivity;
  /**
   * Tool calls, cost, egress and spend limits, as in `agentRun` (model turns are the caller's `stopWhen`).
   * They only tighten the worker's caps (`step.scope.caps`), which bind the run whatever it asks.
   */
  limits?: Limits;
}

export type { RefusedToolResult } from './agent/governed-call';

/**
 * The governed tools for `generateText`, and the calls they made.
 *
 * @experimental
 */
export interface GovernedTools {
  /** The offered tools by their offered names (`crm__lookup_customer`), for `generateText({ tools })`. */
  tools: Record<string, Tool<Record<string, unknown>, unknown, ToolContext>>;
  /** Every call, allowed or refused, in the order the model made them. */
  journal(): JournalEntry[];
  /** The run's usage of its limits so far. */
  readonly budget: Budget;
  /**
   * `governedModel(step, modelId)` whose calls count against this budget: turns, tokens and the
   * deadline (the run's own limits within the worker's caps) end the run typed `LimitReached`.
   */
  model(modelId: string, activity?: ActivityOptions): LanguageModelV4;
}

/**
 * Turns the tools a run may offer its model into AI SDK tools. The user's prompt is declared the
 * trusted source; every tool result is labelled as untrusted output of its tool; the calls of one
 * model step are judged against what the model had read when it wrote them (the labels of every
 * earlier step); calls that change the world run one at a time, in the model's order. A refused
 * call does not throw: the model gets `{ error, rule, reason }` as the tool's result.
 *
 * A call that needs a person waits inside its `execute` until a declared approver answers (a denial is
 * a refusal the model is told); the tools carry no AI SDK `needsApproval`, which would hand the answer
 * to workflow code unverified. Apps speaking the AI SDK's approval protocol read the waiting call with
 * `approvalRequests` and answer it with `respondToApprovals` (toolplane/client).
 *
 * @example
 * ```ts
 * const step = await StepCtx.open({ principal: 'agent:desk' });
 * const { tools } = governedTools(step, { prompt });
 * const { text } = await generateText({ model: temporalProvider.languageModel('gpt-5-mini'), prompt, tools, stopWhen: stepCountIs(10) });
 * ```
 *
 * @experimental
 */
export function governedTools(step: StepCtx, options: GovernedToolsOptions): GovernedTools {
  // What the run was asked heads its Current Details in the Web UI, as an agentRun's prompt is its Summary.
  step.summarise(options.prompt);
  const offered = step.catalog.offered(step.scope.policy);
  const budget = new Budget(options.limits ?? {}, Date.now(), 0, undefined, step.scope.caps);
  const provenance = new Provenance();
  provenance.produce(options.prompt, {
    source: USER_PROMPT,
    trusted: true,
    callTrusted: true,
    sensitivity: options.promptSensitivity ?? 'internal',
  });
  const scope = { step, budget, provenance };
  // One model step's calls share what the model had read, and their lanes. A step is told apart by
  // the transcript it was written from, which grows with every step.
  let current: { transcript: number; seen: ProvenanceView; tails: Map<string, Promise<unknown>> } | undefined;
  const stepOf = (transcript: number) => {
    if (current?.transcript !== transcript)
      current = { transcript, seen: provenance.snapshot(), tails: new Map<string, Promise<unknown>>() };
    return current;
  };

  const call = async (offer: OfferedTool, input: unknown, callId: string, seen: ProvenanceView, position: number) => {
    const r = await governedAgentCall(scope, { toolId: offer.toolId, args: input, offer, position, callId, seen });
    if ('refused' in r) return r.refused;
    // An output stored outside history reaches the model as its preview.
    return isStoredHandle(r.output) ? r.output.preview : r.output;
  };

  const tools: GovernedTools['tools'] = {};
  for (const offer of offered) {
    tools[offer.name] = tool<Record<string, unknown>, unknown, ToolContext>({
      description: offer.description,
      inputSchema: jsonSchema<Record<string, unknown>>(offer.inputSchema),
      execute: (input: Record<string, unknown>, opts: ToolExecutionOptions<ToolContext>) => {
        // Synchronous up to here, so positions follow the order in which the model's calls are started.
        const position = step.reserve(1);
        const s = stepOf(opts.messages.length);
        const run = () => call(offer, input, opts.toolCallId, s.seen, position);
        const lane = laneOf(step.catalog.declared(offer.toolId)?.decl, input, position);
        if (lane === undefined) return run();
        const next = (s.tails.get(lane) ?? Promise.resolve()).then(run, run);
        s.tails.set(
          lane,
          next.catch(() => undefined),
        );
        return next;
      },
    });
  }
  return {
    tools,
    journal: () => step.ordered(),
    budget,
    model: (modelId, activity) => budgetedModel(step, modelId, activity, budget),
  };
}
