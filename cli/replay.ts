// `toolplane replay`: replay a run's history with the current workflow code: toolplane's own
// workflows, or (`--workflows`) the workflows module of your own worker.
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import type { ReplayWorkerOptions } from '@temporalio/worker';
import { WorkflowName } from '../common/names';
import { WORKFLOW_INTERCEPTOR_MODULES, WORKFLOWS_PATH } from '../runtime/workflow-modules';
import { usageError } from './exit-codes';
import { emit, onRun, withClient, withCommonOptions, type Cli, type CommonOptions } from './shared';

interface ReplayOptions extends CommonOptions {
  workflows?: string;
}

const OWN_WORKFLOWS: readonly string[] = Object.values(WorkflowName);

/**
 * The file of a workflows module, as a worker's `workflowsPath` names it: a path (relative to the
 * working directory, with or without its extension) or a package's module.
 */
export function workflowsModule(spec: string, cwd = process.cwd()): string {
  const file = path.resolve(cwd, spec);
  for (const candidate of [file, `${file}.ts`, path.join(file, 'index.ts')])
    if (fs.existsSync(candidate) && fs.statSync(candidate).isFile()) return candidate;
  try {
    return require.resolve(file);
  } catch {
    // not a path: a package's module, from the working directory
  }
  try {
    return require.resolve(spec, { paths: [cwd] });
  } catch {
    throw usageError(`--workflows: no workflows module "${spec}" (looked in ${cwd})`);
  }
}

/**
 * @temporalio/ai-sdk's plugin, when installed beside the workflows module: a worker running AI SDK
 * workflows has it, and its bundler settings (Web API polyfills before `ai` loads) are what lets
 * such a bundle load. Replay calls no model, so its provider has none.
 */
function aiSdkPluginBeside(module: string): NonNullable<ReplayWorkerOptions['plugins']> {
  let resolved: string;
  try {
    resolved = require.resolve('@temporalio/ai-sdk', { paths: [path.dirname(module)] });
  } catch {
    return [];
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { AiSdkPlugin } = require(resolved) as { AiSdkPlugin: new (opts: { modelProvider: unknown }) => object };
  const noModel = () => {
    throw new Error('a replay calls no model');
  };
  const modelProvider = { specificationVersion: 'v4', languageModel: noModel, embeddingModel: noModel };
  return [new AiSdkPlugin({ modelProvider }) as NonNullable<ReplayWorkerOptions['plugins']>[number]];
}

/**
 * How a history is replayed: bundled as a worker with toolplane's plugin bundles it (the workflow
 * interceptors every toolplane bundle holds), from toolplane's workflows or the given module.
 */
export function replayOptions(workflows?: string): ReplayWorkerOptions {
  // eslint-disable-next-line @typescript-eslint/no-require-imports, @typescript-eslint/consistent-type-imports
  const { workflowSpanSinks } = require('../activities/telemetry') as typeof import('../activities/telemetry');
  const module = workflows === undefined ? WORKFLOWS_PATH : workflowsModule(workflows);
  return {
    workflowsPath: module,
    interceptors: { workflowModules: WORKFLOW_INTERCEPTOR_MODULES },
    replayName: 'toolplane-replay',
    sinks: workflowSpanSinks(),
    ...(workflows === undefined ? {} : { plugins: aiSdkPluginBeside(module) }),
  };
}

export function registerReplay(program: Command, cli: Cli): void {
  withCommonOptions(
    program
      .command('replay <workflowId>')
      .description("replay a run's history with the current workflow code; fails on any divergence")
      .option(
        '--workflows <module>',
        "your worker's workflows module (its workflowsPath), to replay a run of your own workflow (default: toolplane's agentRun, toolRun, delegatedCall)",
      ),
  ).action((workflowId: string, opts: ReplayOptions) => {
    // Checked before anything is sent.
    const options = opts.workflows === undefined ? undefined : replayOptions(opts.workflows);
    return withClient(opts, async (c, settings) => {
      const history = await onRun(workflowId, settings, () => c.workflow.getHandle(workflowId).fetchHistory());
      const type = history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name ?? undefined;
      if (!options && type && !OWN_WORKFLOWS.includes(type))
        throw usageError(
          `${workflowId} is a run of ${type}, not of toolplane's own workflows: replay it with your worker's workflows module, --workflows <module>`,
        );
      // Loaded only here: the rest of the CLI never pulls in the worker SDK.
      const { Worker } = await import('@temporalio/worker');
      await Worker.runReplayHistory(options ?? replayOptions(), history, workflowId);
      const events = history.events?.length ?? 0;
      emit(cli, opts, { workflowId, type, events, divergence: false }, () => [
        `${workflowId}: replayed ${events} events with the current code, no divergence`,
      ]);
    });
  });
}
