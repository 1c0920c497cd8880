// Workflow-safe: an agent run. Model turns and tool calls alternate; every call is governed.
import { ALLOW_ALL } from '../../catalog/policy';
import { isStoredHandle, storedOf } from '../../common/stored-output';
import type { ModelToolCall } from '../../common/wire';
import type { AgentRunInputShape } from '../../common/run-input';
import { refuseMalformedInput } from '../input-check';
import { listed, type JournalEntry } from '../../common/journal';
import { summarize, type JournalSummary } from '../journal-summary';
import { laneOf, runInLanes, type LaneItem } from '../lanes';
import { Budget, type Usage } from '../gate/limits';
import { Provenance, USER_PROMPT } from '../gate/provenance';
import { nameRunSpan } from '../run-span';
import { StepCtx } from '../step-ctx';
import { continuingResetChain } from '../base-branch';
import { continueChain, historyIsLong, refuseForeignCarry, type AgentRunCarry, type ChainState } from './chain';
import { delegateTo } from './delegate';
import { governedAgentCall, governedAgentCallTo, type AgentCall, type AgentCallResult } from './governed-call';
import { byReference, Conversation, readCall, turnKey, type ToolReply } from './turn';

export type { AgentRunCarry } from './chain';

/**
 * An agent run's input: the shape a client sends, derived from the schema both the client and the run
 * check it with (common/run-input.ts), and the state the run itself carries when it continues as new.
 */
export type AgentRunInput = Omit<AgentRunInputShape, 'carry'> & {
  /** Set by the run itself when it continues as new; a run a client starts with it is refused. */
  carry?: AgentRunCarry;
};

export interface AgentRunResult {
  status: 'completed' | 'limit';
  answer?: string;
  /** The limit that ended the run: `limit:<name>` the run's own, `worker_limit:<name>` the worker's cap. */
  rule?: string;
  reason?: string;
  /**
   * This run's calls that are not routine: every call refused, asked about, approved or denied,
   * reconciled, escalated, sent again, failed or otherwise notable (`isRoutine` says which are routine).
   * With the input's `fullJournal`, every call of this run. A chain's earlier runs hold theirs in their
   * histories. `readJournal` and `toolplane show` list every call, routine ones included, from history.
   */
  journal: JournalEntry[];
  /**
   * This run's routine calls, counted and left out of `journal`: allowed, sent once, completed, with
   * nothing else to say. 0 with `fullJournal`. Absent in results of runs recorded before it (they list every call).
   */
  routineCalls?: number;
  /** The whole chain's journal in numbers. */
  summary?: JournalSummary;
  usage: Usage;
}

export async function agentRun(input: AgentRunInput): Promise<AgentRunResult> {
  // Checked before anything reads it: a null or malformed input fails the run at once, typed.
  refuseMalformedInput('agentRun', input);
  refuseForeignCarry(input.carry);
  continuingResetChain(input.carry?.fromReset);
  const run = await openRun(input);
  nameRunSpan(run.step.scope.principal);
  // A run that fails or is cancelled says so, and no longer claims to wait for anyone.
  try {
    for (;;) {
      const turnLimit = run.budget.checkTurn(Date.now());
      if (!turnLimit.ok) return finish(run, { status: 'limit', rule: turnLimit.rule, reason: turnLimit.reason });
      const number = run.budget.usage.turns + 1;
      const turn = await run.conversation.take(number);
      run.budget.chargeTurn(turn.usage);
      run.step.stream.publish({
        type: 'turn-completed',
        turn: turnKey(number),
        text: turn.message.content,
        toolCalls: (turn.message.toolCalls ?? []).map((c) => ({ id: c.id, name: c.name })),
        usage: turn.usage,
      });
      const calls = turn.message.toolCalls ?? [];
      if (calls.length === 0) return finish(run, { status: 'completed', answer: turn.message.content });
      run.conversation.deliver(await callTools(run, input, calls));
      if (historyIsLong(input.continueAsNewAfterEvents)) await continueChain(input, run);
    }
  } catch (err) {
    run.step.ended(err);
    throw err;
  }
}

/** Asks the worker what the run may hold (a continued run: exactly what the chain held), and picks up the chain. */
async function openRun(input: AgentRunInput): Promise<ChainState> {
  const { carry } = input;
  const policy = input.policy ?? ALLOW_ALL;
  // A continued run shows the worker the ticket of the run it continues: the chain holds exactly what it held.
  const step = await StepCtx.open({
    ...(carry
      ? { carry: carry.ticket, manifestDigest: carry.manifestDigest }
      : {
          principal: input.principal,
          credential: input.credential,
          // The credential acts only for this input (its own field aside): a start with other input is refused.
          input,
          grants: input.grants,
          capabilities: input.capabilities,
          manifestDigest: input.manifestDigest,
        }),
    // The worker holds the script: its authority names only the endpoint.
    model: byReference(input.model),
    policy,
    ...(carry?.stream ? { stream: carry.stream } : {}),
  });
  const startedAt = carry?.startedAt ?? Date.now();
  // The worker's caps bound the run's own limits: a run's limits only tighten them.
  const budget = new Budget(input.limits ?? {}, startedAt, input.delegationDepth ?? 0, carry?.usage, step.scope.caps);
  const provenance = carry ? Provenance.restore(carry.provenance) : new Provenance();
  if (carry) step.resume(carry.step);
  else
    provenance.produce(input.prompt, {
      source: USER_PROMPT,
      trusted: true,
      callTrusted: true,
      sensitivity: input.promptSensitivity ?? 'internal',
    });
  const conversation = new Conversation(
    { principal: step.scope.principal, ticket: step.scope.ticket, inOpening: step.scope.firstOpening === true },
    input.model,
    step.catalog.offered(policy),
    carry?.transcript,
    carry ? carry.messages : Conversation.opening(input.prompt, input.systemPrompt),
    input.streamTokens !== false,
  );
  return {
    step,
    budget,
    provenance,
    conversation,
    startedAt,
    carried: carry?.summary,
    fullJournal: input.fullJournal === true,
  };
}

/**
 * A turn's calls, judged against what the model had read when it wrote them. Positions follow the
 * model's order; lanes decide what may run at the same time. Each result is what the model reads.
 */
function callTools(run: ChainState, input: AgentRunInput, calls: ModelToolCall[]): Promise<ToolReply[]> {
  const { step } = run;
  const offered = run.conversation.offered;
  const base = step.reserve(calls.length);
  const seen = run.provenance.snapshot();
  const delegate = delegateTo({ carry: step.carry(), manifestDigest: step.scope.manifestDigest });
  return runInLanes(
    calls.map((c, i): LaneItem<ToolReply> => {
      const { offer, toolId, args } = readCall(offered, c);
      const decl = step.catalog.declared(toolId)?.decl;
      const position = base + i;
      const independent = decl?.concurrency?.class === 'independent';
      const call: AgentCall = { toolId, args, offer, position, callId: c.id, seen };
      if (independent) call.delegate = delegate;
      const reply = (r: AgentCallResult) => toolReply(c.id, r);
      const lane = laneOf(decl, args, position);
      // In no lane, the turn waits on the call itself; in a lane, on its promise, which the lane's next call follows.
      if (lane === undefined) return { lane, start: (end) => governedAgentCallTo(run, call, reply, end) };
      return { lane, run: () => governedAgentCall(run, call, reply) };
    }),
  );
}

/** What the model reads of a call: its output, a stored output's handle, or the refusal. */
function toolReply(toolCallId: string, r: AgentCallResult): ToolReply {
  if ('refused' in r) return { toolCallId, value: r.refused };
  if (isStoredHandle(r.output)) return { toolCallId, stored: storedOf(r.output) };
  return { toolCallId, value: r.output };
}

function finish(run: ChainState, r: Omit<AgentRunResult, 'journal' | 'usage'>): AgentRunResult {
  run.step.releaseLeases();
  run.step.stream.publish({ type: 'run-completed', ...r });
  const entries = run.step.ordered();
  const { journal, routine } = listed(entries, run.fullJournal);
  return {
    ...r,
    journal,
    routineCalls: routine,
    summary: summarize(entries, run.carried),
    usage: run.budget.usage,
  };
}
