// `toolplane describe`: one run at a glance: status, principal, refusals, whom it waits for, what waits, the link.
import type { Command } from 'commander';
import { pendingDecisions } from '../inspect/decisions';
import type { PendingEscalation } from '../workflows/escalation';
import { answerHint, whenLine } from './escalations';
import { QUERY_TIMEOUT_MS, withinMs } from '../inspect/follow';
import { failingLine, failingWorkflowTask, runRow } from './runs';
import {
  emit,
  NO_WEB_UI,
  onRun,
  webUiLink,
  withClient,
  withCommonOptions,
  type Cli,
  type CommonOptions,
} from './shared';

export function registerDescribe(program: Command, cli: Cli): void {
  withCommonOptions(
    program
      .command('describe <workflowId>')
      .description(
        'a run at a glance: status, principal, tools called, refusals, what waits for a person, Web UI link',
      ),
  ).action((workflowId: string, opts: CommonOptions) =>
    withClient(opts, async (c, settings) => {
      const handle = c.workflow.getHandle(workflowId);
      const d = await onRun(workflowId, settings, () => handle.describe());
      const row = runRow(d);
      if (row.status === 'RUNNING') {
        const failing = await failingWorkflowTask(c, { workflowId, runId: d.runId }, d.raw.pendingWorkflowTask).catch(
          () => undefined,
        );
        if (failing) row.workflowTaskFailing = failing;
      }
      const summary = await d.staticSummary().catch(() => undefined);
      // A run whose workflow task fails answers neither queries nor updates: nothing it waits for can be answered.
      const pending: PendingEscalation[] =
        row.status === 'RUNNING' && !row.workflowTaskFailing
          ? await withinMs(handle, QUERY_TIMEOUT_MS, () => pendingDecisions(c, workflowId)).catch(() => [])
          : [];
      const url = webUiLink(settings, workflowId, d.runId);
      emit(
        cli,
        opts,
        {
          ...row,
          summary,
          pending: pending.map((p) => ({ ...p, deadline: new Date(p.deadline).toISOString() })),
          webUi: url,
        },
        () => [
          `${workflowId}  ${row.status}  (${row.type} on task queue ${row.taskQueue})`,
          ...(row.workflowTaskFailing
            ? [
                `  STUCK:        ${failingLine(row.workflowTaskFailing)}`,
                `                the run makes no progress and answers nothing until a worker completes its workflow task`,
              ]
            : []),
          ...(summary ? [`  summary:      ${summary}`] : []),
          `  principal:    ${row.principal ?? '-'}`,
          `  started:      ${row.startTime}${row.closeTime ? `, closed ${row.closeTime}` : ''}`,
          `  tools called: ${row.toolsCalled.join(', ') || '-'}`,
          `  refusals:     ${row.refusals}`,
          `  waiting for:  ${row.waitingFor}`,
          ...(row.manifestDigest ? [`  manifest:     ${row.manifestDigest}`] : []),
          ...pending.flatMap((p) => [
            `  waiting: #${p.position} ${p.toolId} ${p.kind}: ${p.reason} (${whenLine(p.deadline)})`,
            ...answerHint(workflowId, p, settings).map((l) => `    ${l}`),
          ]),
          `  Web UI:       ${url ?? NO_WEB_UI}`,
        ],
      );
    }),
  );
}
