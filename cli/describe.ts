// `toolplane describe`: one run at a glance: status, principal, refusals, whom it waits for, what waits, the link.
import type { Command } from 'commander';
import { pendingDecisions, type PendingEscalation } from '../client';
import { answerHint, whenLine } from './escalations';
import { runRow } from './runs';
import { emit, onRun, webUiLink, withClient, withCommonOptions, type Cli, type CommonOptions } from './shared';

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
      const summary = await d.staticSummary().catch(() => undefined);
      const pending: PendingEscalation[] =
        row.status === 'RUNNING' ? await pendingDecisions(c, workflowId).catch(() => []) : [];
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
          ...(summary ? [`  summary:      ${summary}`] : []),
          `  principal:    ${row.principal ?? '-'}`,
          `  started:      ${row.startTime}${row.closeTime ? `, closed ${row.closeTime}` : ''}`,
          `  tools called: ${row.toolsCalled.join(', ') || '-'}`,
          `  refusals:     ${row.refusals}`,
          `  waiting for:  ${row.waitingFor}`,
          ...(row.manifestDigest ? [`  manifest:     ${row.manifestDigest}`] : []),
          ...pending.flatMap((p) => [
            `  waiting: #${p.position} ${p.toolId} ${p.kind}: ${p.reason} (${whenLine(p.deadline)})`,
            ...answerHint(workflowId, p).map((l) => `    ${l}`),
          ]),
          ...(url ? [`  Web UI:       ${url}`] : []),
        ],
      );
    }),
  );
}
