// `toolplane escalations`: the calls of a run that wait for a person, and how to answer each.
import type { Command } from 'commander';
import { pendingDecisions } from '../inspect/decisions';
import type { PendingEscalation } from '../workflows/escalation';
import { shellWord, type ConnectionSettings } from '../inspect/connection';
import { commandLine, emit, onRun, withClient, withCommonOptions, type Cli, type CommonOptions } from './shared';

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

/**
 * The exact commands that answer a waiting call, with the connection flags that reach the server
 * the run is on (the settings this command used), so that pasted anywhere they answer this run, and
 * `--credential` where the run's worker verifies who decides.
 */
export function answerHint(
  workflowId: string,
  p: Pick<PendingEscalation, 'effectKey' | 'kind' | 'needsCredential'>,
  settings?: ConnectionSettings,
): string[] {
  // Where the worker verifies who decides, the answer carries the approver's own credential.
  const credential = p.needsCredential ? ['--credential', '"$TOOLPLANE_CREDENTIAL"'] : [];
  const cmd = (...args: string[]) => commandLine(settings, ...args, ...credential);
  const [wf, key] = [shellWord(workflowId), shellWord(p.effectKey)];
  return p.kind === 'approval'
    ? [`approve: ${cmd('approve', wf, key)}`, `deny:    ${cmd('deny', wf, key, '--reason "<why>"')}`]
    : [
        `retry:   ${cmd('resolve', wf, key, 'retry')}`,
        `landed:  ${cmd('resolve', wf, key, 'landed', "--output '<json>'")}`,
        `abort:   ${cmd('resolve', wf, key, 'abort', '--reason "<why>"')}`,
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
                ...answerHint(workflowId, p, settings).map((l) => `  ${l}`),
              ]),
      );
    }),
  );
}
