// `toolplane reset <workflowId> --to <position|effect key>`: what a reset to that call will do with each
// effect (inspect/reset-plan.ts), and, with --yes, the reset itself on the operator's connection.
import type { Command } from 'commander';
import { formatResetPlan, planReset, resetAsPlanned } from '../inspect/reset-plan';
import { usageError } from './exit-codes';
import { emit, onRun, withClient, withCommonOptions, type Cli, type CommonOptions } from './shared';

interface ResetOptions extends CommonOptions {
  to?: string;
  yes?: boolean;
  reason?: string;
}

export function registerReset(program: Command, cli: Cli): void {
  withCommonOptions(
    program
      .command('reset <workflowId>')
      .description(
        'reset a run to one of its calls: prints what happens to each effect (kept, adopted, recovery decides, judged again); --yes resets',
      )
      .option(
        '--to <position|effectKey>',
        'the call the reset run makes again (a position of `toolplane show`, or an effect key)',
      )
      .option('--yes', 'reset after the preview (without it, only the preview)')
      .option('--reason <text>', "the reason Temporal records with the reset (default: the command's own words)"),
  ).action((workflowId: string, opts: ResetOptions) =>
    withClient(opts, async (c, settings) => {
      if (!opts.to) throw usageError('--to <position|effectKey> is required: the call the run is reset to');
      const to = opts.to;
      const plan = await onRun(workflowId, settings, () => planReset(c, workflowId, to));
      const resetRunId = opts.yes
        ? await resetAsPlanned(c, settings.namespace, plan, opts.reason ?? `toolplane reset --to ${to}`)
        : undefined;
      emit(cli, opts, { ...plan, ...(resetRunId ? { resetRunId } : {}) }, () => [
        ...formatResetPlan(plan),
        resetRunId ? `reset: the run goes on as ${resetRunId}` : 'preview only: add --yes to reset',
      ]);
    }),
  );
}
