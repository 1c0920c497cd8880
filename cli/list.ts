// `toolplane list`: runs with their status, principal, tools called, refusals and whether a person must act.
import type { Command } from 'commander';
import { PRINCIPAL, REFUSALS, WAITING_FOR, WaitingFor } from '../common/search-attributes';
import { usageError } from './exit-codes';
import { failingLine, runRow, table, withFailingWorkflowTasks, type RunRow } from './runs';
import { emit, withClient, withCommonOptions, type Cli, type CommonOptions } from './shared';

interface ListOptions extends CommonOptions {
  principal?: string;
  status?: string;
  waiting?: boolean;
  refused?: boolean;
  limit: string;
}

/** `--status` values and the ExecutionStatus they select. */
const STATUSES: Record<string, string> = {
  running: 'Running',
  completed: 'Completed',
  failed: 'Failed',
  canceled: 'Canceled',
  cancelled: 'Canceled',
  terminated: 'Terminated',
  timed_out: 'TimedOut',
  continued_as_new: 'ContinuedAsNew',
};

function quoted(flag: string, value: string): string {
  if (/['"\\]/.test(value)) throw usageError(`${flag} must not contain quotes or backslashes: ${value}`);
  return `'${value}'`;
}

/**
 * The visibility query for the flags. A run is toolplane's when it carries a principal: every run
 * that opened a StepCtx (agentRun, toolRun, a subagent's delegated call, a workflow of your own)
 * labels itself with the principal the worker granted it, whatever its workflow type.
 */
export function listQuery(opts: Pick<ListOptions, 'principal' | 'status' | 'waiting' | 'refused'>): string {
  const clauses = [
    opts.principal ? `${PRINCIPAL.name} = ${quoted('--principal', opts.principal)}` : `${PRINCIPAL.name} IS NOT NULL`,
  ];
  if (opts.status) {
    const s = STATUSES[opts.status.toLowerCase()];
    if (!s) throw usageError(`--status must be one of ${Object.keys(STATUSES).join(', ')}, not "${opts.status}"`);
    clauses.push(`ExecutionStatus = '${s}'`);
  }
  if (opts.waiting)
    clauses.push(
      `${WAITING_FOR.name} IN ('${WaitingFor.Approval}', '${WaitingFor.Escalation}')`,
      `ExecutionStatus = 'Running'`,
    );
  if (opts.refused) clauses.push(`${REFUSALS.name} > 0`);
  return clauses.join(' AND ');
}

export function registerList(program: Command, cli: Cli): void {
  withCommonOptions(
    program
      .command('list')
      .description('runs, newest first: status, principal, tools called, refusals, whether a person must act')
      .option('--principal <id>', 'only runs acting for this principal')
      .option('--status <status>', `only runs in this status (${Object.keys(STATUSES).join(', ')})`)
      .option('--waiting', 'only running runs waiting for a person (approval or in-doubt decision)')
      .option('--refused', 'only runs with at least one refused or denied call')
      .option('--limit <n>', 'at most this many runs', '20'),
  ).action((opts: ListOptions) => {
    // The flags are checked before anything is sent.
    const limit = Number(opts.limit);
    if (!Number.isInteger(limit) || limit < 1)
      throw usageError(`--limit must be a positive integer, not "${opts.limit}"`);
    const query = listQuery(opts);
    return withClient(opts, async (c) => {
      const rows: RunRow[] = [];
      for await (const info of c.workflow.list({ query, pageSize: Math.min(limit, 100) })) {
        rows.push(runRow(info));
        if (rows.length >= limit) break;
      }
      await withFailingWorkflowTasks(c, rows);
      emit(cli, opts, { query, runs: rows }, () =>
        rows.length === 0
          ? ['no runs match']
          : [
              ...table(
                ['workflow id', 'status', 'principal', 'refusals', 'waiting for', 'tools called'],
                rows.map((r) => [
                  r.workflowId,
                  r.workflowTaskFailing ? `${r.status} (STUCK)` : r.status,
                  r.principal ?? '-',
                  String(r.refusals),
                  r.waitingFor,
                  r.toolsCalled.join(', ') || '-',
                ]),
              ),
              ...rows.flatMap((r) =>
                r.workflowTaskFailing ? [`${r.workflowId}: ${failingLine(r.workflowTaskFailing)}`] : [],
              ),
            ],
      );
    });
  });
}
