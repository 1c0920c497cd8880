/**
 * What an operator's reset of a run to one of its calls will do with each effect, read from the run's
 * history before anything is reset (`toolplane reset --to`). The protection itself is the workflow's
 * (a reset run adopts what its base branch completed, common/base-branch.ts); this only says it ahead.
 */
import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { randomUUID } from 'node:crypto';
import Long from 'long';
import { ToolplaneError } from '../catalog/errors';
import { ErrorCode } from '../catalog/error-codes';
import { effectKeyOfActivityId } from '../common/effect-key';
import { ActivityName } from '../common/names';
import type { JournalEntry } from '../common/journal';
import { journalQuery } from '../workflows/journal-query';
import { QUERY_TIMEOUT_MS, withinMs } from './follow';
import { effectsFromHistory, journalFromCompletion, type EffectView } from './journal';

type Event = temporal.api.history.v1.IHistoryEvent;

/** What the reset run does with one effect of the run it is reset from. */
export type ResetFate =
  /** Before the reset point: in the reset run's history as it is, not run again. */
  | 'kept'
  /** Completed after the point: adopted when the reset run makes the same call (same key and arguments), nothing sent. */
  | 'adopted'
  /** Sent after the point with no recorded outcome: the tool's recovery decides, nothing is sent blind. */
  | 'recovery decides'
  /** Never sent (refused, or waiting): judged again when the reset run makes the call. */
  | 'judged again';

export interface ResetPlanEffect {
  position: number;
  toolId: string;
  effectKey?: string;
  fate: ResetFate;
  recovery: string;
  /**
   * People's decisions on it: kept before the point; after it, carried to the very same call (same
   * effect key) when the reset run makes it, except an in-doubt `retry`, which is asked again.
   */
  decisions: { decision: string; fate: 'kept' | 'carried' | 'asked again' }[];
}

export interface ResetPlan {
  workflowId: string;
  runId: string;
  status: string;
  /** The call the run is reset to: the reset run makes it again (and adopts it if the base completed it). */
  to: { position: number; effectKey: string; toolId: string };
  /** The `WorkflowTaskCompleted` event Temporal resets to: the workflow task that scheduled that call. */
  workflowTaskFinishEventId: number;
  effects: ResetPlanEffect[];
  /** A run still running is terminated by the reset, mid-call if a call is in flight. */
  warnings: string[];
}

interface Sends {
  /** Where each sent effect first entered history: its scheduled event and the workflow task that scheduled it. */
  first: Map<string, { scheduled: number; task: number }>;
  /** The last event of an effect's sends (scheduled or closed): after the point, the base's outcome is not in the reset run. */
  last: Map<string, number>;
}

/** Each sent effect's first schedule and last event, in one pass over the history. */
function sendsIn(events: Event[]): Sends {
  const byScheduled = new Map<string, string>();
  const first: Sends['first'] = new Map();
  const last: Sends['last'] = new Map();
  for (const e of events) {
    const s = e.activityTaskScheduledEventAttributes;
    const type = s?.activityType?.name;
    if (s && (type === ActivityName.Perform || type === ActivityName.Reconcile)) {
      const key = effectKeyOfActivityId(s.activityId ?? '');
      const eventId = Number(e.eventId);
      byScheduled.set(String(e.eventId), key);
      if (!first.has(key)) first.set(key, { scheduled: eventId, task: Number(s.workflowTaskCompletedEventId) });
      last.set(key, eventId);
      continue;
    }
    const closed =
      e.activityTaskCompletedEventAttributes ??
      e.activityTaskFailedEventAttributes ??
      e.activityTaskTimedOutEventAttributes ??
      e.activityTaskCanceledEventAttributes;
    const key = closed ? byScheduled.get(String(closed.scheduledEventId)) : undefined;
    if (key) last.set(key, Number(e.eventId));
  }
  return { first, last };
}

function fateOf(
  view: EffectView,
  sent: { scheduled: number } | undefined,
  point: number,
  toPosition: number,
): ResetFate {
  if (sent ? sent.scheduled < point : view.position < toPosition) return 'kept';
  if (view.outcome === 'ok') return 'adopted';
  // Sent without an outcome, or failed after a send: the tool may have done it, so recovery decides.
  const unknown = ['pending', 'in_doubt', 'timed_out'].includes(view.outcome) || view.outcome.startsWith('failed');
  if (sent && unknown) return 'recovery decides';
  return 'judged again';
}

/** The call `to` names (a position, or an effect key) and the workflow task that scheduled it: where Temporal resets to. */
function resetPoint(
  effects: EffectView[],
  first: Map<string, { scheduled: number; task: number }>,
  to: string,
  run: string,
): { target: EffectView & { effectKey: string }; point: number } {
  const target = /^\d+$/.test(to)
    ? effects.find((v) => v.position === Number(to))
    : effects.find((v) => v.effectKey === to);
  const sentPositions = effects.filter((v) => v.effectKey && first.has(v.effectKey)).map((v) => v.position);
  if (!target)
    throw new ToolplaneError(
      ErrorCode.UsageError,
      `${run} has no call ${/^\d+$/.test(to) ? 'at position' : 'with effect key'} ${to}; its sent calls are at positions ${sentPositions.join(', ') || '(none)'}`,
    );
  const sent = target.effectKey ? first.get(target.effectKey) : undefined;
  if (!sent || !target.effectKey)
    throw new ToolplaneError(
      ErrorCode.UsageError,
      `position ${target.position} (${target.toolId}) was never sent (${target.outcome}), so no workflow task scheduled it: reset to a call that was sent (positions ${sentPositions.join(', ') || 'none'})`,
    );
  return { target: { ...target, effectKey: target.effectKey }, point: sent.task };
}

/** Reads the run's latest history and says what a reset to `to` (a position, or an effect key) does. */
export async function planReset(client: Client, workflowId: string, to: string): Promise<ResetPlan> {
  const handle = client.workflow.getHandle(workflowId);
  const description = await handle.describe();
  const events = (await client.workflow.getHandle(workflowId, description.runId).fetchHistory()).events ?? [];
  let journal: JournalEntry[] | undefined = journalFromCompletion(events);
  if (!journal && description.status.name === 'RUNNING')
    journal = await withinMs(handle, QUERY_TIMEOUT_MS, () => handle.query(journalQuery)).catch(() => undefined);
  const effects = effectsFromHistory(events, journal ?? []);
  const { first, last } = sendsIn(events);
  const { target, point } = resetPoint(effects, first, to, `run ${workflowId} (${description.runId})`);
  // A call sent before the point whose outcome came after it would be in flight in the reset run.
  const inFlight = effects.filter((v) => {
    const s = v.effectKey ? first.get(v.effectKey) : undefined;
    return s && v.effectKey && s.scheduled < point && (last.get(v.effectKey) ?? 0) > point;
  });
  if (inFlight.length)
    throw new ToolplaneError(
      ErrorCode.UsageError,
      `at that point ${inFlight.map((v) => `position ${v.position} (${v.toolId})`).join(', ')} ${inFlight.length > 1 ? 'are' : 'is'} in flight: reset to a call before ${inFlight.length > 1 ? 'them' : 'it'}, or after ${inFlight.length > 1 ? 'their outcomes' : 'its outcome'}`,
    );
  const warnings: string[] = [];
  if (description.status.name === 'RUNNING')
    warnings.push(
      'the run is running: Temporal terminates it, and a call in flight then has an unknown outcome (its recovery decides)',
    );
  return {
    workflowId,
    runId: description.runId,
    status: description.status.name,
    to: { position: target.position, effectKey: target.effectKey, toolId: target.toolId },
    workflowTaskFinishEventId: point,
    warnings,
    effects: effects.map((v) => {
      const s = v.effectKey ? first.get(v.effectKey) : undefined;
      const fate = fateOf(v, s, point, target.position);
      return {
        position: v.position,
        toolId: v.toolId,
        ...(v.effectKey ? { effectKey: v.effectKey } : {}),
        fate,
        recovery: v.recovery,
        decisions: v.personDecisions.map((decision) => ({
          decision,
          fate:
            fate === 'kept'
              ? ('kept' as const)
              : decision.startsWith('retry')
                ? ('asked again' as const)
                : ('carried' as const),
        })),
      };
    }),
  };
}

/** The plan as an operator reads it, one line per effect. */
export function formatResetPlan(plan: ResetPlan): string[] {
  const lines = [
    `${plan.workflowId} (${plan.runId}, ${plan.status}): reset to position ${plan.to.position} (${plan.to.toolId}), workflow task event ${plan.workflowTaskFinishEventId}`,
    ...plan.warnings.map((w) => `warning: ${w}`),
  ];
  for (const e of plan.effects) {
    const decided = e.decisions.length
      ? `; decisions ${e.decisions.map((d) => `${d.decision} (${d.fate === 'carried' ? 'carried to the same call' : d.fate})`).join(', ')}`
      : '';
    const how = e.fate === 'recovery decides' ? `recovery decides (${e.recovery})` : e.fate;
    lines.push(`  ${e.position}  ${e.toolId}  ${how}${decided}`);
  }
  return lines;
}

/** Resets the run as planned, on the operator's own connection; the reset run's id. */
export async function resetAsPlanned(
  client: Client,
  namespace: string,
  plan: ResetPlan,
  reason: string,
): Promise<string> {
  const reset = await client.workflowService.resetWorkflowExecution({
    namespace,
    workflowExecution: { workflowId: plan.workflowId, runId: plan.runId },
    reason,
    workflowTaskFinishEventId: Long.fromNumber(plan.workflowTaskFinishEventId),
    requestId: randomUUID(),
  });
  return reset.runId ?? '';
}
