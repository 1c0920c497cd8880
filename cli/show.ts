// `toolplane show`: each effect of a run, from its history and its journal.
import type { Command } from 'commander';
import { formatEffects, readJournal } from '../inspect/journal';
import { emit, onRun, withClient, withCommonOptions, type Cli, type CommonOptions } from './shared';

export function registerShow(program: Command, cli: Cli): void {
  withCommonOptions(
    program
      .command('show <workflowId>')
      .description('each effect of a run: position, tool, key, attempts, recovery, outcome, decision and who decided'),
  ).action((workflowId: string, opts: CommonOptions) =>
    withClient(opts, async (c, settings) => {
      const { effects, status } = await onRun(workflowId, settings, () => readJournal(c, workflowId));
      emit(cli, opts, { workflowId, status, effects }, () => [`${workflowId}: ${status}`, ...formatEffects(effects)]);
    }),
  );
}
