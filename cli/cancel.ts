// `toolplane cancel`: ask a run to stop; calls in flight finish or are cancelled as their tools allow.
import type { Command } from 'commander';
import { emit, onRun, withClient, withCommonOptions, type Cli, type CommonOptions } from './shared';

export function registerCancel(program: Command, cli: Cli): void {
  withCommonOptions(program.command('cancel <workflowId>').description('request cancellation of a run')).action(
    (workflowId: string, opts: CommonOptions) =>
      withClient(opts, async (c, settings) => {
        await onRun(workflowId, settings, () => c.workflow.getHandle(workflowId).cancel());
        emit(cli, opts, { workflowId, cancelRequested: true }, () => [`${workflowId}: cancellation requested`]);
      }),
  );
}
