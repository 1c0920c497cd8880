// Reading what a run's history holds, the way an auditor would.
import { ActivityName } from '../../common/names';
import type { Client } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import type { RunTicket } from '../../common/ticket';

export type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

export async function historyOf(client: Client, workflowId: string): Promise<HistoryEvent[]> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  return history.events ?? [];
}

/** The activities a run scheduled, but for the worker's answer to what the run may hold (`authorizeRun`), which is no effect. */
export function scheduledActivities(events: HistoryEvent[]) {
  return events
    .filter(
      (e) =>
        e.activityTaskScheduledEventAttributes &&
        e.activityTaskScheduledEventAttributes.activityType?.name !== ActivityName.Authorize,
    )
    .map((e) => {
      const a = e.activityTaskScheduledEventAttributes!;
      const summary = e.userMetadata?.summary
        ? defaultPayloadConverter.fromPayload<string>(e.userMetadata.summary)
        : undefined;
      const input = a.input?.payloads?.[0]
        ? defaultPayloadConverter.fromPayload<Record<string, unknown>>(a.input.payloads[0])
        : undefined;
      return { activityId: a.activityId!, type: a.activityType!.name!, summary, input };
    });
}

/** Which worker started each activity (its identity, `<pid>@<host>`), in the order they started. */
export function startedBy(events: HistoryEvent[]): { type: string; identity: string }[] {
  const scheduled = new Map(
    events
      .filter((e) => e.activityTaskScheduledEventAttributes)
      .map((e) => [String(e.eventId), e.activityTaskScheduledEventAttributes!.activityType!.name!]),
  );
  return events
    .filter((e) => e.activityTaskStartedEventAttributes)
    .map((e) => ({
      type: scheduled.get(String(e.activityTaskStartedEventAttributes!.scheduledEventId))!,
      identity: e.activityTaskStartedEventAttributes!.identity!,
    }));
}

/** The worker's answer to a run's first `authorizeRun` (its opening), as the run's local-activity marker holds it. */
export async function openingOf(
  h: { client: Client },
  workflowId: string,
): Promise<{ principal: string; ticket: RunTicket; tools?: unknown[] }> {
  for (const e of await historyOf(h.client, workflowId)) {
    const m = e.markerRecordedEventAttributes;
    const data = m?.details?.data?.payloads?.[0];
    const result = m?.details?.result?.payloads?.[0];
    if (!data || !result) continue;
    if (defaultPayloadConverter.fromPayload<{ activity_type?: string }>(data).activity_type !== ActivityName.Authorize)
      continue;
    return defaultPayloadConverter.fromPayload(result);
  }
  throw new Error(`${workflowId} has no authorizeRun marker`);
}
