// Workflow-safe: an agent run. Model turns and tool calls alternate; every call is governed.
import { ApplicationFailure, continueAsNew, executeChild, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { ModelRequest } from '../catalog/authority';
import type { Sensitivity } from '../catalog/manifest';
import { ALLOW_ALL, type Policy } from '../catalog/policy';
import { offeredDigest, type OfferedTool } from '../catalog/tool-catalog';
import { WorkflowName } from '../common/names';
import { isStoredHandle, storedOf } from '../common/stored-output';
import type { ChatMessage, CitedOrigin, ModelActivities, ModelTurnResult } from '../common/wire';
import type { DelegatedCallInput, DelegatedCallResult } from './delegated-call';
import { governanceGate } from './governance';
import { refuseMalformedInput } from './input-check';
import type { JournalEntry } from './journal';
import { summarize, type JournalSummary } from './journal-summary';
import { laneOf, runInLanes } from './lanes';
import { Budget, type Limits, type Usage } from './limits';
import { Provenance, USER_PROMPT, type ProvenanceState } from './provenance';
import { nameRunSpan } from './run-span';
import { StepCtx, type StepState } from './step-ctx';
import { produceToolOutput } from './tool-output-labels';
import { StepError } from './step-error';

export interface AgentRunInput {
  prompt: string;
  principal: string;
  /** Tools the run asks for (default: every tool the worker lets this principal have). */
  grants?: string[];
  /** The manifest digest the caller pinned; a worker with another manifest refuses the run. */
  manifestDigest?: string;
  /** A worker-declared model endpoint by name. */
  model: ModelRequest;
  policy?: Policy;
  limits?: Limits;
  systemPrompt?: string;
  /** How sensitive the prompt itself is (default internal). */
  promptSensitivity?: Sensitivity;
  delegationDepth?: number;
  /** Capabilities the run asks for, such as `extension-runtime`; the worker decides. */
  capabilities?: string[];
  /**
   * Continue as new once this run's history holds this many events (default: when Temporal
   * suggests it). The chain is one run: positions, budgets, labels and the conversation go on.
   */
  continueAsNewAfterEvents?: number;
  /** Set by the run itself when it continues as new; a run a client starts with it is refused. */
  carry?: AgentRunCarry;
}

/** What a run hands the run that continues it: everything its decisions depend on. */
export interface AgentRunCarry {
  v: 1;
  /** The worker's answer at the chain's start; the continued run asks for exactly it, pinned to the same manifest. */
  authority: { manifestDigest: string; grants: string[]; capabilities: string[] };
  /** When the chain started: the deadline counts from here. */
  startedAt: number;
  step: StepState;
  usage: Usage;
  provenance: ProvenanceState;
  /** The conversation so far, kept by the worker, and what the model has not yet read. */
  transcript: string;
  messages: ChatMessage[];
  summary: JournalSummary;
  /** The journal of the run that continued: kept in its history, where `toolplane show` reads it. */
  journal: JournalEntry[];
}

export interface AgentRunResult {
  status: 'completed' | 'limit';
  answer?: string;
  /** The limit that ended the run. */
  rule?: string;
  reason?: string;
  /** This run's entries; a chain's earlier runs hold theirs in their histories. */
  journal: JournalEntry[];
  /** The whole chain's journal in numbers. */
  summary?: JournalSummary;
  usage: Usage;
}

const { modelTurn } = proxyActivities<ModelActivities>({
  startToCloseTimeout: '2m',
  retry: {
    maximumAttempts: 3,
    initialInterval: '1s',
    nonRetryableErrorTypes: ['ModelAuth', 'ModelRequestInvalid', 'ModelRefused', 'TranscriptUnavailable'],
  },
});

export async function agentRun(input: AgentRunInput): Promise<AgentRunResult> {
  nameRunSpan(input.principal);
  refuseMalformedInput('agentRun', input);
  const carry = input.carry;
  if (carry && !workflowInfo().continuedFromExecutionRunId)
    throw ApplicationFailure.nonRetryable(
      'a run may not start from carried state; only a run continuing as new passes it on',
      'RunRefused',
    );
  const policy = input.policy ?? ALLOW_ALL;
  // The worker holds the script: turns (and a continued run's input) name only the endpoint.
  const { script: _script, ...modelByRef } = input.model;
  const step = await StepCtx.open({
    principal: input.principal,
    grants: carry ? carry.authority.grants : input.grants,
    capabilities: carry ? carry.authority.capabilities : input.capabilities,
    manifestDigest: carry ? carry.authority.manifestDigest : input.manifestDigest,
    model: modelByRef,
    policy,
  });
  const catalog = step.catalog;
  const offered = catalog.offered(policy);
  const startedAt = carry?.startedAt ?? Date.now();
  const budget = new Budget(input.limits ?? {}, startedAt, input.delegationDepth ?? 0, carry?.usage);
  const provenance = carry ? Provenance.restore(carry.provenance) : new Provenance();
  let seen = provenance.snapshot(); // what the model had read when it wrote the current turn's calls
  if (carry) step.resume(carry.step);
  else
    provenance.produce(input.prompt, {
      source: USER_PROMPT,
      trusted: true,
      callTrusted: true,
      sensitivity: input.promptSensitivity ?? 'internal',
    });

  const opening: ChatMessage[] = [
    ...(input.systemPrompt ? [{ role: 'system' as const, content: input.systemPrompt }] : []),
    { role: 'user', content: input.prompt },
  ];
  /** The conversation by reference, and what the model has not read yet. */
  let transcript = carry?.transcript;
  let unread: ChatMessage[] = carry ? carry.messages : opening;
  const toolsDigest = offeredDigest(offered);
  const finish = (r: Omit<AgentRunResult, 'journal' | 'usage'>): AgentRunResult => {
    step.releaseLeases();
    const journal = step.ordered();
    return {
      ...r,
      journal,
      summary: summarize(journal, carry?.summary),
      usage: budget.usage,
    };
  };

  const takeTurn = async (): Promise<ModelTurnResult> => {
    // Numbered from 1 in the Web UI: `model turn 3`.
    const summary = { summary: `model turn ${budget.usage.turns + 1}` };
    const turn = await modelTurn.executeWithOptions(summary, [
      {
        model: transcript ? modelByRef : input.model,
        transcript,
        messages: unread,
        toolsDigest,
        ...(transcript ? {} : { tools: offered }),
      },
    ]);
    if (!turn.transcript)
      throw ApplicationFailure.nonRetryable('the model turn kept no transcript for the run', 'TranscriptUnavailable');
    transcript = turn.transcript;
    unread = [];
    return turn;
  };

  /** Hands everything the run's decisions depend on to a fresh run of the same workflow id. */
  const continueChain = async (): Promise<never> => {
    const journal = step.ordered();
    const next: AgentRunInput = {
      ...input,
      model: modelByRef,
      carry: {
        v: 1,
        authority: {
          manifestDigest: step.scope.manifestDigest!,
          grants: [...step.scope.grants],
          capabilities: [...(step.scope.capabilities ?? [])],
        },
        startedAt,
        step: step.state(),
        usage: budget.usage,
        provenance: provenance.state(),
        transcript: transcript!,
        messages: unread,
        summary: summarize(journal, carry?.summary),
        journal,
      },
    };
    return continueAsNew<typeof agentRun>(next);
  };
  const historyIsLong = (): boolean => {
    const info = workflowInfo();
    return (
      info.continueAsNewSuggested ||
      (input.continueAsNewAfterEvents !== undefined && info.historyLength >= input.continueAsNewAfterEvents)
    );
  };

  const delegate = async (toolId: string, args: Record<string, unknown>, position: number): Promise<unknown> => {
    // A subagent: its own workflow and lane, one delegation level deeper; the gates already ran here.
    const workflowId = `${workflowInfo().workflowId}/delegated-${position}`;
    const childInput: DelegatedCallInput = {
      principal: input.principal,
      toolId,
      args,
      capabilities: step.scope.capabilities ? [...step.scope.capabilities] : undefined,
      manifestDigest: input.manifestDigest,
    };
    const child: DelegatedCallResult = await executeChild(WorkflowName.DelegatedCall, {
      workflowId,
      args: [childInput],
    });
    if (child.error) throw new StepError(child.error.code, child.error.message, child.error.rule);
    return child.output;
  };

  const governedCall = async (c: {
    toolId: string;
    args: unknown;
    offer: OfferedTool | undefined;
    position: number;
    callId: string;
    independent: boolean;
  }): Promise<ChatMessage> => {
    let callTrusted = false;
    let origins: CitedOrigin[] = [];
    try {
      const output = await step.callTool(c.toolId, c.args, {
        position: c.position,
        modelCallId: c.callId,
        answering: c.offer,
        onOrigins: (o) => (origins = o),
        gate: governanceGate({
          principal: input.principal,
          offer: c.offer,
          budget,
          provenance: seen,
          onAllowed: (t) => (callTrusted = t),
        }),
        ...(c.independent ? { delegate } : {}),
      });
      const decl = catalog.declared(c.toolId)!.decl;
      produceToolOutput(provenance, {
        toolId: c.toolId,
        output,
        callTrusted,
        origins,
        sensitivity: decl.sensitivity.output,
      });
      if (isStoredHandle(output))
        return { role: 'tool', toolCallId: c.callId, content: output.preview, stored: storedOf(output) };
      return { role: 'tool', toolCallId: c.callId, content: JSON.stringify(output) };
    } catch (err) {
      if (!StepError.is(err)) throw err;
      return {
        role: 'tool',
        toolCallId: c.callId,
        content: JSON.stringify({ error: err.code, rule: err.rule, reason: err.message }),
      };
    }
  };

  // A run that fails or is cancelled says so, and no longer claims to wait for anyone.
  try {
    for (;;) {
      const turnLimit = budget.checkTurn(Date.now());
      if (!turnLimit.ok) return finish({ status: 'limit', rule: turnLimit.rule, reason: turnLimit.reason });
      const turn = await takeTurn();
      budget.chargeTurn(turn.usage);
      const calls = turn.message.toolCalls ?? [];
      if (calls.length === 0) return finish({ status: 'completed', answer: turn.message.content });

      // Positions follow the model's order; lanes decide what may run at the same time.
      const base = step.reserve(calls.length);
      seen = provenance.snapshot();
      const results = await runInLanes(
        calls.map((c, i) => {
          const offer = offered.find((o) => o.name === c.name || o.toolId === c.name);
          const toolId = offer?.toolId ?? c.name;
          let args: unknown;
          try {
            args = JSON.parse(c.arguments);
          } catch {
            args = c.arguments;
          }
          const decl = catalog.declared(toolId)?.decl;
          const position = base + i;
          return {
            lane: laneOf(decl, args, position),
            run: () =>
              governedCall({
                toolId,
                args,
                offer,
                position,
                callId: c.id,
                independent: decl?.concurrency?.class === 'independent',
              }),
          };
        }),
      );
      unread = results;
      if (historyIsLong()) await continueChain();
    }
  } catch (err) {
    step.ended(err);
    throw err;
  }
}
