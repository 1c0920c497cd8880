// Worker side: one worker with both plugins. toolplane's contributes the governed tool activities
// and the worker's authority (manifest, grants); @temporalio/ai-sdk's runs the model calls and lets
// `ai` load in the workflow sandbox. The worker owns the model provider, as it owns the tools.
import type { ProviderV4 } from '@ai-sdk/provider';
import { AiSdkPlugin } from '@temporalio/ai-sdk';
import { Worker, type NativeConnection, type WorkerOptions } from '@temporalio/worker';
import { ToolplanePlugin, type ToolplanePluginOptions } from 'toolplane';

export const AI_SDK_AGENT_WORKFLOWS = require.resolve('./workflows');

export interface AiSdkAgentWorkerOptions extends ToolplanePluginOptions {
  connection: NativeConnection;
  taskQueue: string;
  namespace?: string;
  /** The AI SDK provider whose models the workflow's `temporalProvider.languageModel(id)` reaches. */
  modelProvider: ProviderV4;
  /** A bundle built beforehand (with the AiSdkPlugin's bundler settings); otherwise the workflows are bundled here. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  bundlerOptions?: WorkerOptions['bundlerOptions'];
}

export async function createAiSdkAgentWorker(opts: AiSdkAgentWorkerOptions): Promise<Worker> {
  const { connection, taskQueue, namespace, modelProvider, workflowBundle, bundlerOptions, ...toolplane } = opts;
  const plugin = new ToolplanePlugin(toolplane);
  await plugin.verifySources();
  return Worker.create({
    connection,
    namespace: namespace ?? 'default',
    taskQueue,
    ...(workflowBundle ? { workflowBundle } : { workflowsPath: AI_SDK_AGENT_WORKFLOWS, bundlerOptions }),
    plugins: [plugin, new AiSdkPlugin({ modelProvider })],
  });
}
