// What `list` and `describe` read from a run's visibility record: status, principal, tools
// called, refusals and whom it waits for.
import type { WorkflowExecutionInfo } from '@temporalio/client';
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
