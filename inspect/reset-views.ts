// What `toolplane show` says of a reset run's calls sent after its reset point (issue 50): the run it
// was reset from never made the call under this key (its arguments changed, or the base never reached
// it), or made it without a recorded outcome, so the tool's recovery sent it again. An adopted call
// says so already (`adoptedFrom`).
import { temporal } from '@temporalio/proto';
import { defaultPayloadConverter } from '@temporalio/common';
import type { BaseBranch } from '../common/base-branch';
import { effectKeyOfActivityId } from '../common/effect-key';
import { ActivityName } from '../common/names';
import type { EffectView } from './journal';

type Event = temporal.api.history.v1.IHistoryEvent;

const RESET_CAUSE = temporal.api.enums.v1.WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_RESET_WORKFLOW;

/** The keys the base branch sent without an outcome, as this run's own questions (`readBaseBranch`) were answered. */
function unknownInBase(events: Event[]): Set<string> {
  const asked = new Set<string>();
  const unknown = new Set<string>();
  for (const e of events) {
    const s = e.activityTaskScheduledEventAttributes;
    if (s?.activityType?.name === ActivityName.BaseBranch) asked.add(String(e.eventId));
    const done = e.activityTaskCompletedEventAttributes;
    if (done && asked.has(String(done.scheduledEventId))) {
      const p = done.result?.payloads?.[0];
      const answer = p ? defaultPayloadConverter.fromPayload<BaseBranch>(p) : undefined;
      for (const key of Object.keys(answer?.unknown ?? {})) unknown.add(key);
    }
  }
  return unknown;
}

/** Marks each call this run sent first after its (latest) reset point; a run never reset is returned as it is. */
export function markSentAfterReset(events: Event[], views: EffectView[]): EffectView[] {
  let at = -1;
  let baseRunId = '';
  events.forEach((e, i) => {
    const f = e.workflowTaskFailedEventAttributes;
    if (f?.cause === RESET_CAUSE && f.baseRunId) [at, baseRunId] = [i, f.baseRunId];
  });
  if (at < 0) return views;
  const sentBefore = new Set<string>();
  const sentAfter = new Set<string>();
  events.forEach((e, i) => {
    const s = e.activityTaskScheduledEventAttributes;
    if (s?.activityType?.name === ActivityName.Perform)
      (i < at ? sentBefore : sentAfter).add(effectKeyOfActivityId(s.activityId ?? ''));
  });
  const unknown = unknownInBase(events);
  for (const v of views) {
    if (!v.effectKey || v.adoptedFrom || sentBefore.has(v.effectKey) || !sentAfter.has(v.effectKey)) continue;
    v.afterReset = { baseRunId, base: unknown.has(v.effectKey) ? 'outcome unknown' : 'not made' };
  }
  return views;
}
