// `toolplane escalations`: the calls of a run that wait for a person, and how to answer each.
import type { Command } from 'commander';
import { pendingDecisions, type PendingEscalation } from '../client';
import { emit, onRun, withClient, withCommonOptions, type Cli, type CommonOptions } from './shared';

/** A deadline people read: `until 2026-12-01 14:03 UTC (in 23h 59m)`. */
export function whenLine(deadlineMs: number, now = Date.now()): string {
  const at = new Date(deadlineMs).toISOString().replace('T', ' ').slice(0, 16);
  return `until ${at} UTC (${relative(deadlineMs - now)})`;
}

function relative(ms: number): string {
  const past = ms < 0;
  let s = Math.round(Math.abs(ms) / 1000);
  const d = Math.floor(s / 86400);
  s -= d * 86400;
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  const parts = d ? [`${d}d`, `${h}h`] : h ? [`${h}h`, `${m}m`] : m ? [`${m}m`] : [`${s - m * 60}s`];
  return past ? `${parts.join(' ')} ago` : `in ${parts.join(' ')}`;
}

/** The exact commands that answer a waiting call. */
export function answerHint(workflowId: string, p: Pick<PendingEscalation, 'effectKey' | 'kind'>): string[] {
  return p.kind === 'approval'
    ? [
        `approve: npx toolplane approve ${workflowId} ${p.effectKey}`,
        `deny:    npx toolplane deny ${workflowId} ${p.effectKey} --reason "<why>"`,
      ]
    : [
        `retry:   npx toolplane resolve ${workflowId} ${p.effectKey} retry`,
        `landed:  npx toolplane resolve ${workflowId} ${p.effectKey} landed --output '<json>'`,
        `abort:   npx toolplane resolve ${workflowId} ${p.effectKey} abort --reason "<why>"`,
      ];
}

export function registerEscalations(program: Command, cli: Cli): void {
  withCommonOptions(
    program
      .command('escalations <workflowId>')
      .description('calls of a run that wait for a person, and how to answer each'),
  ).action((workflowId: string, opts: CommonOptions) =>
    withClient(opts, async (c, settings) => {
      const pending = await onRun(workflowId, settings, () => pendingDecisions(c, workflowId));
      emit(
        cli,
        opts,
        {
          workflowId,
          pending: pending.map((p) => ({ ...p, deadline: new Date(p.deadline).toISOString() })),
        },
        () =>
          pending.length === 0
            ? ['nothing is waiting']
            : pending.flatMap((p) => [
                `${p.effectKey}  #${p.position} ${p.toolId}  ${p.kind}: ${p.reason}  (${whenLine(p.deadline)})`,
                ...answerHint(workflowId, p).map((l) => `  ${l}`),
              ]),
      );
    }),
  );
}
