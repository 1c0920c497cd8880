// Worker side: one worker with both plugins. toolplane's contributes the governed tool activities
// and the worker's authority (manifest, grants, endpoints per principal); @temporalio/ai-sdk's runs the
// model calls, through toolplane's provider (only declared endpoints, each call under the run's
// ticket), and lets `ai` load in the workflow sandbox. The worker owns its endpoints, as it owns the tools.
import type { ProviderV4 } from '@ai-sdk/provider';
import { AiSdkPlugin } from '@temporalio/ai-sdk';
import { Worker, type NativeConnection, type WorkerOptions } from '@temporalio/worker';
import { ToolplanePlugin, type ToolplanePluginOptions } from 'toolplane';

export const AI_SDK_AGENT_WORKFLOWS = require.resolve('./workflows');

export interface AiSdkAgentWorkerOptions extends ToolplanePluginOptions {
  connection: NativeConnection;
  taskQueue: string;
  namespace?: string;
  /**
   * Providers the worker supplies for endpoints its manifest declares but toolplane does not build
   * (a `scripted` endpoint: the tests and the demo). Declared network endpoints need none.
   */
  endpointProviders?: Readonly<Record<string, ProviderV4>>;
  /** A bundle built beforehand (with the AiSdkPlugin's bundler settings); otherwise the workflows are bundled here. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  bundlerOptions?: WorkerOptions['bundlerOptions'];
}

export async function createAiSdkAgentWorker(opts: AiSdkAgentWorkerOptions): Promise<Worker> {
  const { connection, taskQueue, namespace, endpointProviders, workflowBundle, bundlerOptions, ...toolplane } = opts;
  const plugin = new ToolplanePlugin(toolplane);
  await plugin.verifySources();
  return Worker.create({
    connection,
    namespace: namespace ?? 'default',
    taskQueue,
    ...(workflowBundle ? { workflowBundle } : { workflowsPath: AI_SDK_AGENT_WORKFLOWS, bundlerOptions }),
    plugins: [plugin, new AiSdkPlugin({ modelProvider: plugin.modelProvider({ providers: endpointProviders }) })],
  });
}
