// Workflow-safe: a long agent run is a chain of runs of one workflow id. When its history grows
// long, a run hands everything its decisions depend on to a fresh run (continue-as-new): positions,
// leases, budgets, labels and the conversation go on, and the chain counts as one run.
import { ApplicationFailure, continueAsNew, workflowInfo } from '@temporalio/workflow';
import type { TicketCarry } from '../../common/ticket';
import type { ChatMessage } from '../../common/wire';
import { listed, type JournalEntry } from '../../common/journal';
import { summarize, type JournalSummary } from '../journal-summary';
import type { Budget, Usage } from '../gate/limits';
import type { Provenance, ProvenanceState } from '../gate/provenance';
import type { RunStreamState } from '../run-stream';
import type { StepCtx, StepState } from '../step-ctx';
import type { Conversation } from './turn';
import { RunFailureType } from '../../catalog/failure-types';
import { asksBaseBranch } from '../base-branch';

/** What a run hands the run that continues it: everything its decisions depend on. */
export interface AgentRunCarry {
  v: 1;
  /** The ticket of the run that continued: the next run shows it to the worker, pinned to the same manifest. */
  ticket: TicketCarry;
  manifestDigest: string;
  /** When the chain started: the deadline counts from here. */
  startedAt: number;
  step: StepState;
  usage: Usage;
  provenance: ProvenanceState;
  /** The conversation so far, kept by the worker, and what the model has not yet read. */
  transcript: string;
  messages: ChatMessage[];
  summary: JournalSummary;
  /**
   * The journal of the run that continued, kept in its history, where `toolplane show` reads it: its
   * calls that are not routine (every call with the input's `fullJournal`; in carries recorded before
   * `routineCalls`, every call). The history's activities show the routine ones.
   */
  journal: JournalEntry[];
  /** The continued run's routine calls, left out of `journal`; absent in older carries. */
  routineCalls?: number;
  /** The run's stream: where its offsets go on (its log stays in the run that continued). */
  stream?: RunStreamState;
  /**
   * The run that continued was a reset run, or continued one: the next run asks what the base chain
   * did before its effects too (its calls may be ones the base chain's later runs made). Absent: never reset.
   */
  fromReset?: true;
}

/** Carried state comes only from the run this one continues; a client that sends it is refused. */
export function refuseForeignCarry(carry: AgentRunCarry | undefined): void {
  if (carry && !workflowInfo().continuedFromExecutionRunId)
    throw ApplicationFailure.nonRetryable(
      'a run may not start from carried state; only a run continuing as new passes it on',
      RunFailureType.RunRefused,
    );
}

/** Temporal suggests continuing, or the run's own limit of events is reached. */
export function historyIsLong(continueAsNewAfterEvents: number | undefined): boolean {
  const info = workflowInfo();
  return (
    info.continueAsNewSuggested ||
    (continueAsNewAfterEvents !== undefined && info.historyLength >= continueAsNewAfterEvents)
  );
}

export interface ChainState {
  step: StepCtx;
  budget: Budget;
  provenance: Provenance;
  conversation: Conversation;
  startedAt: number;
  /** The summary the chain carried into this run. */
  carried?: JournalSummary;
  /** The input asked for every call in the journal the run hands on and returns (`fullJournal`). */
  fullJournal: boolean;
}

/** Hands everything the run's decisions depend on to a fresh run of the same workflow id. */
export async function continueChain<I extends { carry?: AgentRunCarry; model: object }>(
  input: I,
  s: ChainState,
): Promise<never> {
  const entries = s.step.ordered();
  const { journal, routine } = listed(entries, s.fullJournal);
  const { step } = s;
  const stream = await step.stream.handOver();
  return continueAsNew<(input: I) => Promise<unknown>>({
    ...input,
    model: s.conversation.modelByRef,
    carry: {
      v: 1,
      ticket: step.carry(),
      manifestDigest: step.scope.manifestDigest!,
      startedAt: s.startedAt,
      step: step.state(),
      usage: s.budget.usage,
      provenance: s.provenance.state(),
      transcript: s.conversation.transcript!,
      messages: s.conversation.unread,
      summary: summarize(entries, s.carried),
      journal,
      routineCalls: routine,
      stream,
      ...(asksBaseBranch() ? { fromReset: true } : {}),
    },
  });
}
