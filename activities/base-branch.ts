// What the run an operator reset this run from (its base branch) did with each effect, read from the
// base's history through the worker's own client. The asking run names nothing: its ids are the
// activity's, as Temporal reports them, and the base is the one its own history names (the workflow
// task Temporal failed with the reset cause). A base that was itself a reset run is read on, through
// the runs it names, so a reset of a reset adopts what any earlier branch completed.
import { Context } from '@temporalio/activity';
import { temporal } from '@temporalio/proto';
import { decodeOptionalSinglePayload } from '@temporalio/common/lib/internal-non-workflow';
import { canonicalJson, sha256Hex } from '../catalog/digest';
import { FailureType, RunFailureType } from '../catalog/failure-types';
import type { BaseBranch, BaseBranchActivities, BaseDecision, BaseEffect } from '../common/base-branch';
import { effectKeyOfActivityId } from '../common/effect-key';
import { ActivityName, UpdateName } from '../common/names';
import type { PerformRequest, PerformResult, Reconciliation } from '../common/wire';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

const RESET_CAUSE = temporal.api.enums.v1.WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_RESET_WORKFLOW;
/** Runs of one chain read at most; an older branch than this is not read (its effects are then not adopted). */
const MAX_RUNS = 16;
/** The answer's outputs at most, in JSON characters: beyond it a completed effect is told as unknown (recovery decides). */
const MAX_OUTPUT_CHARS = 1_000_000;

/** Failures after which nothing reached the provider: the effect may be sent as if never tried. */
const NOTHING_SENT: ReadonlySet<string> = new Set([
  FailureType.Rejected,
  FailureType.DefinitionChanged,
  FailureType.Unavailable,
  FailureType.Invalid,
  RunFailureType.IdentityRefused,
]);

interface Found {
  completed: BaseBranch['completed'];
  unknown: BaseBranch['unknown'];
  decisions: NonNullable<BaseBranch['decisions']>;
  outputChars: number;
}

/** The decision fields a reset run may take over: never the credential or the gateway's relay, spent in the base. */
interface SentDecision {
  effectKey?: unknown;
  decision?: unknown;
  value?: unknown;
  output?: unknown;
  reason?: unknown;
  updateId?: string;
}

async function historyOf(workflowId: string, runId: string): Promise<HistoryEvent[]> {
  const history = await Context.current().client.workflow.getHandle(workflowId, runId).fetchHistory();
  return history.events ?? [];
}

/** The runs this history was reset from, newest first (a reset of a reset keeps the earlier reset's event). */
export function resetBasesIn(events: HistoryEvent[]): string[] {
  const bases: string[] = [];
  for (const e of events) {
    const f = e.workflowTaskFailedEventAttributes;
    if (f?.cause === RESET_CAUSE && f.baseRunId) bases.unshift(f.baseRunId);
  }
  return bases;
}

function decoder() {
  const converter = Context.current().client.options.loadedDataConverter;
  return <T>(p: temporal.api.common.v1.IPayload | null | undefined) =>
    p ? decodeOptionalSinglePayload<T>(converter, p) : Promise.resolve(undefined);
}

/** Reads the decisions people gave in one run into `found`: each accepted `resolveEscalation` the run answered. */
async function decisionsOf(runId: string, events: HistoryEvent[], found: Found): Promise<void> {
  const decode = decoder();
  const asked = new Map<string, SentDecision>();
  for (const e of events) {
    const accepted = e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest;
    if (accepted?.input?.name === UpdateName.ResolveEscalation && accepted.meta?.updateId) {
      const sent = await decode<SentDecision>(accepted.input.args?.payloads?.[0]);
      if (sent) asked.set(accepted.meta.updateId, sent);
      continue;
    }
    const decided = e.workflowExecutionUpdateCompletedEventAttributes;
    const sent = decided && asked.get(decided.meta?.updateId ?? '');
    // A rejected decision (its failure in history) decided nothing.
    if (!sent || !decided.outcome?.success) continue;
    const answer = await decode<{ by?: unknown }>(decided.outcome.success.payloads?.[0]);
    took(found, { ...sent, updateId: decided.meta?.updateId ?? undefined }, answer?.by, runId, Number(e.eventId));
  }
}

/** Reads one run's effects into `found`: a completed send (or a reconcile that found it landed) wins over any other. */
async function effectsOf(runId: string, events: HistoryEvent[], found: Found): Promise<void> {
  const scheduled = new Map<string, { key: string; type: string; args: string }>();
  const decode = decoder();
  const complete = (key: string, effect: BaseEffect, result: PerformResult) => {
    const chars = JSON.stringify(result).length;
    if (found.outputChars + chars > MAX_OUTPUT_CHARS) {
      found.unknown[key] ??= effect;
      return;
    }
    found.outputChars += chars;
    found.completed[key] = { ...effect, result };
    delete found.unknown[key];
  };
  for (const e of events) {
    const eventId = Number(e.eventId);
    const s = e.activityTaskScheduledEventAttributes;
    if (s) {
      const type = s.activityType?.name ?? '';
      if (type !== ActivityName.Perform && type !== ActivityName.Reconcile) continue;
      const key = effectKeyOfActivityId(s.activityId ?? '');
      let args = '';
      if (type === ActivityName.Perform) {
        const req = await decode<PerformRequest>(s.input?.payloads?.[0]);
        args = sha256Hex(canonicalJson(req?.args ?? null));
      }
      scheduled.set(String(eventId), { key, type, args });
      // Sent, no outcome yet: unknown until an event below says otherwise.
      if (type === ActivityName.Perform && !found.completed[key]) found.unknown[key] = { runId, eventId, args };
      continue;
    }
    const done = e.activityTaskCompletedEventAttributes;
    const failed = e.activityTaskFailedEventAttributes;
    const ofEvent = done?.scheduledEventId ?? failed?.scheduledEventId;
    const sent = ofEvent !== undefined && ofEvent !== null ? scheduled.get(String(ofEvent)) : undefined;
    if (!sent || found.completed[sent.key]) continue;
    const args = found.unknown[sent.key]?.args ?? sent.args;
    if (done && sent.type === ActivityName.Perform) {
      const result = await decode<PerformResult>(done.result?.payloads?.[0]);
      if (result) complete(sent.key, { runId, eventId, args }, result);
    } else if (done && sent.type === ActivityName.Reconcile) {
      const answer = await decode<Reconciliation>(done.result?.payloads?.[0]);
      if (answer?.status === 'landed') complete(sent.key, { runId, eventId, args }, { output: answer.output });
    } else if (failed && sent.type === ActivityName.Perform) {
      // Refused before anything reached the provider: as if never sent (unless another send of it is unknown).
      const type = failed.failure?.applicationFailureInfo?.type ?? '';
      if (NOTHING_SENT.has(type) && found.unknown[sent.key]?.eventId === Number(ofEvent))
        delete found.unknown[sent.key];
    }
  }
}

/** Records one decision the base took, under its effect key, as the run's answer named who decided. */
function took(found: Found, sent: SentDecision, by: unknown, runId: string, eventId: number): void {
  if (typeof sent.effectKey !== 'string' || typeof sent.decision !== 'string') return;
  const d: BaseDecision = { decision: sent.decision, runId, eventId };
  if (typeof by === 'string') d.by = by;
  if (typeof sent.value === 'string' || typeof sent.value === 'number') d.value = sent.value;
  if (sent.output !== undefined) d.output = sent.output;
  if (typeof sent.reason === 'string') d.reason = sent.reason;
  if (sent.updateId) d.updateId = sent.updateId;
  (found.decisions[sent.effectKey] ??= []).push(d);
}

/** The run this one continued as new from, and the one it continued to: links of a chain. */
const continuedFrom = (events: HistoryEvent[]) =>
  events[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
const continuedTo = (events: HistoryEvent[]) =>
  events.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId || undefined;

/**
 * The asking run's chain back to its reset run (a run continuing a reset chain names no base itself),
 * and that run's bases: the asking chain's runs are not read again as a base.
 */
async function askingChain(workflowId: string, runId: string): Promise<{ chain: string[]; bases: string[] }> {
  const chain = [runId];
  let events = await historyOf(workflowId, runId);
  for (;;) {
    const bases = resetBasesIn(events);
    const previous = continuedFrom(events);
    if (bases.length > 0 || !previous || chain.length > MAX_RUNS) return { chain, bases };
    chain.push(previous);
    events = await historyOf(workflowId, previous);
  }
}

/**
 * Reads the asking run's base branch: the run its reset copied, the runs that one continued as new to
 * (a reset chain's later runs make the base chain's later calls), and the branches it was reset from.
 */
async function readBaseBranch(): Promise<BaseBranch> {
  const run = Context.current().info.workflowExecution;
  if (!run) return { forRun: '', completed: {}, unknown: {}, unreadable: 'asked by no workflow run' };
  const { chain, bases } = await askingChain(run.workflowId, run.runId);
  const answer: BaseBranch = { forRun: run.runId, completed: {}, unknown: {} };
  if (bases[0]) answer.baseRunId = bases[0];
  else {
    answer.unreadable = `run ${run.runId} names no run it was reset from`;
    return answer;
  }
  const found: Found = { completed: {}, unknown: {}, decisions: {}, outputChars: 0 };
  const queue = [bases[0]];
  const seen = new Set<string>(chain);
  try {
    while (queue.length > 0 && seen.size <= MAX_RUNS + chain.length) {
      const runId = queue.shift()!;
      if (seen.has(runId)) continue;
      seen.add(runId);
      const events = await historyOf(run.workflowId, runId);
      await effectsOf(runId, events, found);
      await decisionsOf(runId, events, found);
      const next = continuedTo(events);
      queue.push(...(next ? [next] : []), ...resetBasesIn(events));
    }
  } catch (err) {
    // Past retention, or unreadable: nothing is adopted, and nothing is sent blind (recovery decides).
    answer.unreadable = `the history of run ${answer.baseRunId} could not be read: ${(err as Error).message}`;
    return answer;
  }
  answer.completed = found.completed;
  answer.unknown = found.unknown;
  if (Object.keys(found.decisions).length > 0) answer.decisions = found.decisions;
  return answer;
}

export function createBaseBranchActivities(): BaseBranchActivities {
  return { readBaseBranch };
}
