// `toolplane replay`: replay a run's history with the current workflow code.
import type { Command } from 'commander';
import { WORKFLOW_INTERCEPTOR_MODULES, WORKFLOWS_PATH } from '../runtime/workflow-modules';
import { emit, onRun, withClient, withCommonOptions, type Cli, type CommonOptions } from './shared';

export function registerReplay(program: Command, cli: Cli): void {
  withCommonOptions(
    program
      .command('replay <workflowId>')
      .description("replay a run's history with the current workflow code; fails on any divergence"),
  ).action((workflowId: string, opts: CommonOptions) =>
    withClient(opts, async (c, settings) => {
      const history = await onRun(workflowId, settings, () => c.workflow.getHandle(workflowId).fetchHistory());
      // Loaded only here: the rest of the CLI never pulls in the worker SDK.
      const { Worker } = await import('@temporalio/worker');
      // eslint-disable-next-line @typescript-eslint/no-require-imports, @typescript-eslint/consistent-type-imports
      const { workflowSpanSinks } = require('../activities/telemetry') as typeof import('../activities/telemetry');
      await Worker.runReplayHistory(
        {
          workflowsPath: WORKFLOWS_PATH,
          interceptors: { workflowModules: WORKFLOW_INTERCEPTOR_MODULES },
          replayName: 'toolplane-replay',
          sinks: workflowSpanSinks(),
        },
        history,
        workflowId,
      );
      const events = history.events?.length ?? 0;
      emit(cli, opts, { workflowId, events, divergence: false }, () => [
        `${workflowId}: replayed ${events} events with the current code, no divergence`,
      ]);
    }),
  );
}
