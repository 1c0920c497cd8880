// The AI SDK example agent on the suite's dev server: its workflow bundle (built once per jest run),
// a worker with both plugins, and a run of it with a scripted model.
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { ProviderV4 } from '@ai-sdk/provider';
import { AiSdkPlugin } from '@temporalio/ai-sdk';
import { bundleWorkflowCode, type Worker } from '@temporalio/worker';
import type { Manifest } from '../../catalog/manifest';
import { manifestDigest } from '../../catalog/digest';
import type { AiSdkAgentInput, AiSdkAgentResult } from '../../examples/ai-sdk-agent/workflows';
import { createAiSdkAgentWorker } from '../../examples/ai-sdk-agent/worker';
import { scriptedProvider, type ScriptedTurn } from '../../examples/ai-sdk-agent/scripted-model';
import type { ToolplanePluginOptions } from '../../plugin';
import type { Harness } from './env';

const root = path.resolve(__dirname, '..', '..');
/** The example's workflows, and the suites' own model-call workflow. */
const AI_SDK_TEST_WORKFLOWS = require.resolve('./ai-sdk-workflows');

/** The example imports toolplane by its package name, as a consumer does; here that is the source. */
const toolplaneSource = {
  'toolplane/workflow$': path.join(root, 'workflow.ts'),
  'toolplane/ai-sdk$': path.join(root, 'ai-sdk.ts'),
};

/** A webpack config hook that resolves `toolplane/*` to the source, as the example's bundle does. */
export function withToolplaneSource<C extends { resolve?: { alias?: unknown } }>(config: C): C {
  return {
    ...config,
    resolve: { ...config.resolve, alias: { ...(config.resolve?.alias as object), ...toolplaneSource } },
  };
}

/**
 * Handed to workers as code, not as a path: with a path, jest's source-map-support reads the 10 MB bundle to map
 * any stack frame in it, and its sourceMappingURL regex can overflow the stack on the 7 MB inline map line.
 */
export async function aiSdkAgentBundle(): Promise<{ code: string }> {
  const codePath = path.join(process.env.TOOLPLANE_TEST_DIR ?? '/tmp', 'ai-sdk-agent-bundle.js');
  if (!fs.existsSync(codePath)) {
    const { code } = await bundleWorkflowCode({
      workflowsPath: AI_SDK_TEST_WORKFLOWS,
      plugins: [new AiSdkPlugin({ modelProvider: scriptedProvider() })],
      webpackConfigHook: withToolplaneSource,
      logger: { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} },
    });
    fs.writeFileSync(codePath, code);
  }
  return { code: fs.readFileSync(codePath, 'utf8') };
}

/** Starts a worker of the example on its own task queue; stop it with `shutdown()`. */
export async function runAiSdkAgentWorker(
  h: Harness,
  toolplane: ToolplanePluginOptions,
  /** Default: the scripted model serves the `scripted` endpoint. */
  endpointProviders: Record<string, ProviderV4> = { scripted: scriptedProvider() },
): Promise<{ taskQueue: string; shutdown(): Promise<void> }> {
  const taskQueue = `${h.taskQueue}-ai-sdk`;
  const worker: Worker = await createAiSdkAgentWorker({
    // As the harness's workers: most suites name their principals.
    insecureAssertedPrincipals: true,
    ...toolplane,
    connection: h.native,
    taskQueue,
    endpointProviders,
    workflowBundle: await aiSdkAgentBundle(),
  });
  const done = worker.run();
  return {
    taskQueue,
    async shutdown() {
      worker.shutdown();
      await done;
    },
  };
}

/** The example's input for a scripted run that asks for every declared tool and pins the manifest. */
export function aiSdkAgentInput(
  manifest: Manifest,
  script: { prompt: string; turns: ScriptedTurn[] },
): AiSdkAgentInput {
  return {
    prompt: script.prompt,
    principal: 'agent:test',
    grants: manifest.tools.map((t) => t.id),
    manifestDigest: manifestDigest(manifest),
    model: 'scripted',
    script: script.turns,
  };
}

export async function runAiSdkAgent(
  h: Harness,
  taskQueue: string,
  input: AiSdkAgentInput,
): Promise<{ result: AiSdkAgentResult; workflowId: string }> {
  const workflowId = `ai-sdk-agent-${randomUUID()}`;
  const result: AiSdkAgentResult = await h.client.workflow.execute('aiSdkAgent', {
    taskQueue,
    workflowId,
    args: [input],
    // What startAgentRun gives an agentRun, and docs/operating-runs.md tells a starter of its own workflow to give.
    staticSummary: input.prompt.slice(0, 200),
  });
  return { result, workflowId };
}
