/**
 * The journal view: each effect of a run, derived from its Temporal history (sends, Temporal's
 * retries of them, reconciles, a person's decisions) and the run's own journal (decisions, rules,
 * refusals), which the history holds in the completion event or the `journal` query answers.
 */
import type { Client } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import type { PerformRequest, Reconciliation } from '../common/wire';
import { effectKeyOfActivityId } from '../common/effect-key';
import { firstPosition, placeUnlisted, routineCallsOf } from './journal-positions';
import { pendingEscalations, type PendingEscalation } from '../workflows/escalation';
import type { JournalEntry } from '../common/journal';
import { journalQuery } from '../workflows/journal-query';
import { QUERY_TIMEOUT_MS, withinMs } from './follow';
import { markSentAfterReset } from './reset-views';

export { formatEffects } from './effects-table';

type Event = temporal.api.history.v1.IHistoryEvent;

export interface EffectView {
  position: number;
  toolId: string;
  effectKey?: string;
  decision: string;
  rule?: string;
  reason?: string;
  /** Sends: the perform activities scheduled for this effect (`<key>`, then `<key>.<n>`); the journal's `attempts`. */
  attempts: number;
  /** Temporal's retries within those sends (runs recorded before `Patch.SendsCounted`): same activity, same key. */
  retries: number;
  /** Of the sends, those the tool answered with a failure (what `retry.maximum_attempts` counts); absent when none. */
  toolFailures?: number;
  /** Of the sends, those no worker finished: the worker died, the server lost the task (a timeout); absent when none. */
  lostSends?: number;
  reconciles: { answer?: string }[];
  /** What people decided about the call, in order: `approve by alice`, `deny by bob`, `retry by oncall`. */
  personDecisions: string[];
  recovery: string;
  /** `ok`, `refused`, `failed: <type>`, `in_doubt`, ...; `waiting` while a person must decide; `pending` while it runs. */
  outcome: string;
  /** A reset run's call that the run it was reset from had completed: adopted, not sent. */
  adoptedFrom?: { runId: string; eventId: number };
  /** A reset run's call sent after its reset point: the base never made it under this key (`not made`), or recorded no outcome. */
  afterReset?: { baseRunId: string; base: 'not made' | 'outcome unknown' };
  /** For a running run: the call waits for a person (its approval, or a decision on its unknown outcome) until `deadline`. */
  waiting?: { kind: PendingEscalation['kind']; deadline: string };
}

function decode<T>(p: temporal.api.common.v1.IPayload | null | undefined): T | undefined {
  return p ? defaultPayloadConverter.fromPayload<T>(p) : undefined;
}

/** A call's view before anything is known of it: allowed so far, nothing sent, still under way. */
function freshView(position: number, toolId: string): EffectView {
  return {
    position,
    toolId,
    decision: 'allowed',
    attempts: 0,
    retries: 0,
    reconciles: [],
    personDecisions: [],
    recovery: 'none',
    outcome: 'pending',
  };
}

/** What reading a history gathers: a view per effect key, and the people's decisions the run took. */
class HistoryViews {
  readonly byKey = new Map<string, EffectView>();
  /** People's decisions by effect key, in history order: an approval comes before its call's first activity. */
  readonly decided = new Map<string, string[]>();
  readonly ordered: EffectView[] = [];
  /** What each effect's first send named, by effect key: its tool and arguments, from which its key was made. */
  readonly sent = new Map<string, { toolId: string; args: unknown }>();
  private readonly byScheduledId = new Map<
    string,
    { view: EffectView; kind: 'perform' | 'reconcile'; index: number }
  >();
  /** Decisions sent through resolveEscalation, by update id, until the run answers them. */
  private readonly answers = new Map<string, { effectKey: string; decision: string; by?: string }>();

  read(e: Event): void {
    if (e.activityTaskScheduledEventAttributes)
      this.scheduled(String(e.eventId), e.activityTaskScheduledEventAttributes);
    else if (e.activityTaskStartedEventAttributes) {
      const started = e.activityTaskStartedEventAttributes;
      // Written once, when the activity closes, with the number of its last attempt.
      const s = this.byScheduledId.get(String(started.scheduledEventId));
      if (s?.kind === 'perform') s.view.retries += Math.max(0, (started.attempt ?? 1) - 1);
    } else if (e.activityTaskCompletedEventAttributes) {
      const completed = e.activityTaskCompletedEventAttributes;
      const s = this.byScheduledId.get(String(completed.scheduledEventId));
      if (!s) return;
      if (s.kind === 'perform') s.view.outcome = 'ok';
      else s.view.reconciles[s.index]!.answer = decode<Reconciliation>(completed.result?.payloads?.[0])?.status;
    } else if (e.activityTaskFailedEventAttributes ?? e.activityTaskTimedOutEventAttributes) {
      this.failed(e);
    } else if (e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === 'resolveEscalation') {
      const request = e.workflowExecutionUpdateAcceptedEventAttributes.acceptedRequest;
      const decision = decode<{ effectKey: string; decision: string; by?: string }>(request.input?.args?.payloads?.[0]);
      const updateId = request.meta?.updateId;
      if (decision && updateId) this.answers.set(updateId, decision);
    } else this.answered(e);
  }

  private scheduled(id: string, scheduled: temporal.api.history.v1.IActivityTaskScheduledEventAttributes): void {
    const type = scheduled.activityType?.name;
    if (type !== 'performTool' && type !== 'reconcileTool') return;
    const input = decode<Pick<PerformRequest, 'toolId' | 'args'>>(scheduled.input?.payloads?.[0]);
    if (!input || !scheduled.activityId) return;
    const effectKey = effectKeyOfActivityId(scheduled.activityId);
    let view = this.byKey.get(effectKey);
    if (!view) {
      // Until the journal or the key places it, the order of first scheduling stands in for the position.
      view = { ...freshView(this.ordered.length, input.toolId), effectKey };
      this.byKey.set(effectKey, view);
      this.ordered.push(view);
      if (type === 'performTool') this.sent.set(effectKey, { toolId: input.toolId, args: input.args });
    }
    if (type === 'performTool') view.attempts++;
    else view.reconciles.push({});
    this.byScheduledId.set(id, {
      view,
      kind: type === 'performTool' ? 'perform' : 'reconcile',
      index: view.reconciles.length - 1,
    });
  }

  private failed(e: Event): void {
    const failed = (e.activityTaskFailedEventAttributes ?? e.activityTaskTimedOutEventAttributes)!;
    const s = this.byScheduledId.get(String(failed.scheduledEventId));
    if (s?.kind !== 'perform') return;
    const timedOut = e.activityTaskTimedOutEventAttributes;
    s.view.outcome = timedOut
      ? 'timed_out'
      : `failed: ${e.activityTaskFailedEventAttributes?.failure?.applicationFailureInfo?.type ?? 'error'}`;
    // A send no worker finished times out (start-to-close, heartbeat); the tool's own failure is a failed task.
    if (timedOut) s.view.lostSends = (s.view.lostSends ?? 0) + 1;
    else s.view.toolFailures = (s.view.toolFailures ?? 0) + 1;
  }

  /** A decision counts once the run took it; one it refused (no call waits, another question) is only tried. */
  private answered(e: Event): void {
    const answered = e.workflowExecutionUpdateCompletedEventAttributes;
    const decision = answered?.meta?.updateId ? this.answers.get(answered.meta.updateId) : undefined;
    if (!decision || !answered?.outcome?.success) return;
    // Who the run recorded as deciding (on a worker with an identity, the verified subject), not who the request named.
    const by = decode<{ by?: string }>(answered.outcome.success.payloads?.[0])?.by ?? decision.by;
    this.decided.set(decision.effectKey, [
      ...(this.decided.get(decision.effectKey) ?? []),
      `${decision.decision}${by ? ` by ${by}` : ''}`,
    ]);
  }
}

/** The run's own journal adds what no activity shows: refusals, rules and the final outcome. */
function addJournal(h: HistoryViews, journal: JournalEntry[]): void {
  for (const j of journal) {
    const view = j.effectKey ? h.byKey.get(j.effectKey) : undefined;
    if (view) {
      Object.assign(view, {
        position: j.position,
        decision: j.decision,
        rule: j.rule,
        reason: j.reason ?? j.error?.message,
        recovery: j.recovery,
        outcome: j.outcome ?? view.outcome,
      });
      // The run counted what the history cannot tell apart (a refusal to send is no failure of the tool).
      if (j.toolFailures !== undefined || j.lostSends !== undefined) {
        view.toolFailures = j.toolFailures;
        view.lostSends = j.lostSends;
        if (view.toolFailures === undefined) delete view.toolFailures;
        if (view.lostSends === undefined) delete view.lostSends;
      }
    } else {
      // No activity of this run sent it (refused before any existed, or delegated to a child run).
      const { position, toolId, effectKey, decision, rule, reason, attempts, recovery } = j;
      const adopted = j.adoptedFrom ? { adoptedFrom: j.adoptedFrom } : {};
      const known = { effectKey, decision, rule, reason, attempts, recovery, ...adopted };
      // Every refusal records its outcome; an entry without one is a call still under way.
      h.ordered.push({ ...freshView(position, toolId), ...known, outcome: j.outcome ?? 'pending' });
    }
  }
}

/** Who decided each call: from the history, then what the journal says the history cannot place. */
function addPeople(h: HistoryViews, journal: JournalEntry[]): void {
  for (const view of h.ordered) {
    const people = view.effectKey ? h.decided.get(view.effectKey) : undefined;
    if (people) view.personDecisions.push(...people);
  }
  // A person's approval or denial the history cannot place (a denied call never had an activity; a
  // journal may lack the key it was asked under): the run's journal says who decided.
  for (const j of journal) {
    if ((j.decision !== 'approved' && j.decision !== 'denied') || !j.decidedBy) continue;
    const view = h.ordered.find((v) => v.position === j.position);
    const verb = j.decision === 'approved' ? 'approve' : 'deny';
    if (view && !view.personDecisions.some((d) => d === verb || d.startsWith(`${verb} `)))
      view.personDecisions.push(`${verb} by ${j.decidedBy}`);
  }
}

/** What waits for a person now: an approval has no activity yet; an in-doubt call waits on its last one. */
function addWaiting(ordered: EffectView[], pending: PendingEscalation[]): void {
  for (const p of pending) {
    let view = ordered.find((v) => v.position === p.position);
    if (!view) ordered.push((view = freshView(p.position, p.toolId)));
    view.effectKey = p.effectKey;
    view.outcome = 'waiting';
    view.waiting = { kind: p.kind, deadline: new Date(p.deadline).toISOString() };
    if (p.kind === 'approval') {
      view.decision = 'awaiting approval';
      view.reason = p.reason;
    } else view.reason = view.reason ?? p.reason;
  }
}

/**
 * The effects a history (and the run's journal, and what the run waits for, for a running run) implies:
 * one view per position, in position order.
 */
export function effectsFromHistory(
  events: Event[],
  journal: JournalEntry[] = [],
  pending: PendingEscalation[] = [],
): EffectView[] {
  const h = new HistoryViews();
  for (const e of events) h.read(e);
  addJournal(h, journal);
  if (routineCallsOf(events) > 0) placeUnlisted(h.ordered, h.sent, journal, firstPosition(events));
  addPeople(h, journal);
  addWaiting(h.ordered, pending);
  return h.ordered.sort((a, b) => a.position - b.position);
}

/**
 * The journal as the run recorded it: from the completion event, or, for a run that continued as
 * new, from the state it handed on (which holds that run's entries).
 */
export function journalFromCompletion(events: Event[]): JournalEntry[] | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    const done = e.workflowExecutionCompletedEventAttributes;
    if (done) return decode<{ journal?: JournalEntry[] }>(done.result?.payloads?.[0])?.journal;
    const continued = e.workflowExecutionContinuedAsNewEventAttributes;
    if (continued)
      return decode<{ carry?: { journal?: JournalEntry[] } }>(continued.input?.payloads?.[0])?.carry?.journal;
  }
  return undefined;
}

/** The histories of a chain of runs under one workflow id, oldest first, ending with the latest run. */
async function chainOf(client: Client, workflowId: string): Promise<Event[][]> {
  const chain: Event[][] = [];
  let runId: string | undefined;
  for (;;) {
    const events = (await client.workflow.getHandle(workflowId, runId).fetchHistory()).events ?? [];
    chain.unshift(events);
    runId = events[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
    if (!runId) return chain;
  }
}

/** Every effect of a run, across the runs it continued as new through: one run to the reader. */
export async function loadEffects(
  client: Client,
  workflowId: string,
): Promise<{ effects: EffectView[]; status: string; events: Event[] }> {
  const handle = client.workflow.getHandle(workflowId);
  const [chain, description] = await Promise.all([chainOf(client, workflowId), handle.describe()]);
  const effects: EffectView[] = [];
  for (const [i, events] of chain.entries()) {
    let journal = journalFromCompletion(events);
    let pending: PendingEscalation[] = [];
    if (!journal && i === chain.length - 1 && description.status.name === 'RUNNING') {
      // A query waits for a worker: bounded, so a run nobody serves (or whose task fails) still shows its history.
      [journal, pending] = await Promise.all([
        withinMs(handle, QUERY_TIMEOUT_MS, () => handle.query(journalQuery)).catch(() => undefined),
        withinMs(handle, QUERY_TIMEOUT_MS, () => handle.query(pendingEscalations)).catch(() => []),
      ]);
    }
    effects.push(...markSentAfterReset(events, effectsFromHistory(events, journal ?? [], pending)));
  }
  effects.sort((a, b) => a.position - b.position);
  return { effects, status: description.status.name, events: chain.flat() };
}

/** Each effect of a run, read from its history (works for finished and running runs). */
export async function readJournal(
  client: Client,
  workflowId: string,
): Promise<{ status: string; effects: EffectView[] }> {
  const { status, effects } = await loadEffects(client, workflowId);
  return { status, effects };
}
