// What `list` and `describe` read from a run's visibility record: status, principal, tools
// called, refusals and whom it waits for; and, for a running run, whether its workflow task keeps failing.
import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import { optionalTsToDate } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import { MANIFEST_DIGEST, PRINCIPAL, REFUSALS, TOOLS_CALLED, WAITING_FOR } from '../common/search-attributes';

export interface RunRow {
  workflowId: string;
  runId: string;
  type: string;
  status: string;
  principal?: string;
  toolsCalled: string[];
  refusals: number;
  waitingFor: string;
  manifestDigest?: string;
  taskQueue: string;
  startTime: string;
  closeTime?: string;
  /** A running run whose workflow task fails, attempt after attempt: it makes no progress until fixed. */
  workflowTaskFailing?: FailingWorkflowTask;
}

export interface FailingWorkflowTask {
  /** The attempt the server is on (2 after the first failure). */
  attempt: number;
  /** When the first of these failures happened (ISO time), after the run's last completed workflow task. */
  since?: string;
  /** That failure's message (a worker records only the first failure of a series in history). */
  message: string;
  /** The server's cause, such as WORKFLOW_TASK_FAILED_CAUSE_NON_DETERMINISTIC_ERROR. */
  cause?: string;
}

type Event = temporal.api.history.v1.IHistoryEvent;
type PendingWorkflowTask = temporal.api.workflow.v1.IPendingWorkflowTaskInfo;

/**
 * Whether the run's workflow task keeps failing: the server's pending workflow task is past its
 * first attempt. Then the history, read backwards to the last completed workflow task, gives the
 * first failure since (its message, cause and time); later attempts are not written to history.
 */
export async function failingWorkflowTask(
  client: Client,
  execution: { workflowId: string; runId?: string },
  pending: PendingWorkflowTask | null | undefined,
): Promise<FailingWorkflowTask | undefined> {
  const attempt = pending?.attempt ?? 0;
  if (attempt < 2) return undefined;
  let first: Event | undefined;
  let nextPageToken: Uint8Array | undefined;
  scan: for (;;) {
    const page = await client.workflowService.getWorkflowExecutionHistoryReverse({
      namespace: client.options.namespace,
      execution,
      maximumPageSize: 100,
      nextPageToken,
    });
    for (const e of page.history?.events ?? []) {
      if (e.workflowTaskCompletedEventAttributes) break scan;
      if (e.workflowTaskFailedEventAttributes || e.workflowTaskTimedOutEventAttributes) first = e;
    }
    if (!page.nextPageToken?.length) break;
    nextPageToken = page.nextPageToken;
  }
  const failed = first?.workflowTaskFailedEventAttributes;
  const since = optionalTsToDate(first?.eventTime ?? pending?.originalScheduledTime)?.toISOString();
  return {
    attempt,
    ...(since ? { since } : {}),
    message: failed
      ? (failed.failure?.message ?? 'the workflow task failed')
      : first
        ? 'the workflow task timed out (a worker took it and never answered)'
        : 'the workflow task keeps being retried',
    ...(failed?.cause ? { cause: causeName(failed.cause) } : {}),
  };
}

function causeName(cause: number): string {
  return temporal.api.enums.v1.WorkflowTaskFailedCause[cause] ?? String(cause);
}

/** For each running row, whether its workflow task keeps failing (one describe per running run, a few at a time). */
export async function withFailingWorkflowTasks(client: Client, rows: RunRow[]): Promise<RunRow[]> {
  const running = rows.filter((r) => r.status === 'RUNNING');
  for (let i = 0; i < running.length; i += 8) {
    await Promise.all(
      running.slice(i, i + 8).map(async (r) => {
        const execution = { workflowId: r.workflowId, runId: r.runId };
        const d = await client.workflowService
          .describeWorkflowExecution({ namespace: client.options.namespace, execution })
          .catch(() => undefined);
        const failing =
          d && (await failingWorkflowTask(client, execution, d.pendingWorkflowTask).catch(() => undefined));
        if (failing) r.workflowTaskFailing = failing;
      }),
    );
  }
  return rows;
}

/** What an operator reads about a failing workflow task, in one line. */
export function failingLine(f: FailingWorkflowTask): string {
  return `workflow task failing${f.since ? ` since ${f.since}` : ''} (attempt ${f.attempt}): ${f.message}`;
}

export function runRow(info: Omit<WorkflowExecutionInfo, 'raw'>): RunRow {
  const sa = info.typedSearchAttributes;
  return {
    workflowId: info.workflowId,
    runId: info.runId,
    type: info.type,
    status: info.status.name,
    principal: sa.get(PRINCIPAL),
    toolsCalled: sa.get(TOOLS_CALLED) ?? [],
    refusals: sa.get(REFUSALS) ?? 0,
    waitingFor: sa.get(WAITING_FOR) ?? 'none',
    manifestDigest: sa.get(MANIFEST_DIGEST),
    taskQueue: info.taskQueue,
    startTime: info.startTime.toISOString(),
    ...(info.closeTime ? { closeTime: info.closeTime.toISOString() } : {}),
  };
}

/** A fixed-width table; the last column is not padded. */
export function table(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ');
  return [line(header), ...rows.map(line)];
}
