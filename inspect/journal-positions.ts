// Where the calls an agent run's result counts rather than lists stand in the run: their positions,
// found from their effect keys (inspect/journal.ts builds the view).
import { defaultPayloadConverter } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { effectKey } from '../common/effect-key';
import type { JournalEntry } from '../common/journal';
import type { EffectView } from './journal';

type Event = temporal.api.history.v1.IHistoryEvent;

function decode<T>(p: temporal.api.common.v1.IPayload | null | undefined): T | undefined {
  return p ? defaultPayloadConverter.fromPayload<T>(p) : undefined;
}

/**
 * The calls the run's journal does not list (an agent run's result counts its routine calls rather
 * than listing them) get their positions from their keys: an effect key is made from the call's tool,
 * the arguments it sent and its position, so the position among the run's free ones whose key is the
 * call's own is the call's. A run's positions are consecutive from its first (`start`); calls are
 * mostly sent in position order, so the first free position usually matches at once.
 */
export function placeUnlisted(
  ordered: EffectView[],
  sentBy: ReadonlyMap<string, { toolId: string; args: unknown }>,
  journal: JournalEntry[],
  start: number,
): void {
  const listed = new Set(journal.map((j) => j.effectKey));
  const unlisted = ordered.filter((v) => v.effectKey !== undefined && !listed.has(v.effectKey));
  if (unlisted.length === 0) return;
  const taken = new Set(journal.map((j) => j.position));
  const end = start + journal.length + unlisted.length;
  let low = start;
  for (const view of unlisted) {
    const sent = sentBy.get(view.effectKey!);
    if (!sent) continue;
    while (taken.has(low)) low++;
    for (let p = low; p < end; p++) {
      if (taken.has(p) || effectKey({ tool: sent.toolId, args: sent.args }, p) !== view.effectKey) continue;
      view.position = p;
      taken.add(p);
      break;
    }
  }
}

/** The position of a run's first call: 0, or where the run it continues stood. */
export function firstPosition(events: Event[]): number {
  const started = events[0]?.workflowExecutionStartedEventAttributes;
  if (!started?.continuedExecutionRunId) return 0;
  const input = decode<{ carry?: { step?: { position?: number } } }>(started.input?.payloads?.[0]);
  return input?.carry?.step?.position ?? 0;
}

/** How many routine calls the run's result (or, for a run that continued as new, its carried state) counted rather than listed. */
export function routineCallsOf(events: Event[]): number {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    const done = e.workflowExecutionCompletedEventAttributes;
    if (done) return decode<{ routineCalls?: number }>(done.result?.payloads?.[0])?.routineCalls ?? 0;
    const continued = e.workflowExecutionContinuedAsNewEventAttributes;
    if (continued)
      return decode<{ carry?: { routineCalls?: number } }>(continued.input?.payloads?.[0])?.carry?.routineCalls ?? 0;
  }
  return 0;
}
