// The support-desk agent with a real model: SmolLM2-135M, on this machine, through the local
// endpoint the manifest declares. Everything else is as with any model: the gate decides each call
// before it runs, calls that need a person wait for one, and the run's history is its journal.
import fs from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { manifestDigest } from '../../catalog/digest';
import { deny, pendingDecisions, startAgentRun } from '../../client';
import { follow } from '../../inspect/follow';
import { loadManifest } from '../../runtime/manifest-file';
import type { AgentRunResult } from '../../workflows/agent/run';
import { createWorker } from '../../worker';
import {
  connectOrStart,
  EAGER_ACTIVITIES,
  runUrl,
  serverConnectOptions,
  type TemporalServer,
} from '../../scripts/dev-server';
import { createTools } from '../support-desk/tools';
import { LOCAL_ENDPOINT, startLocalEndpoint, withLocalModel, type LocalEndpoint } from './endpoint';
import { ensureModel, MODEL_PACKAGE } from './model-package';

const desk = path.resolve(__dirname, '..', 'support-desk');
/** The tasks of `npm start`'s scripted runs, given to the real model instead. */
const TASKS = ['refund.json', 'injected-ticket.json'];
/** A small model may loop; the run's own limit ends it. */
const MAX_TURNS = 6;

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)}s`;

function tally(result: AgentRunResult): string {
  // The result's journal lists only the calls that are not routine; its summary counts every call.
  const s = result.summary;
  const decided = (['allowed', 'approved', 'refused', 'denied'] as const)
    .map((d) => [d, s?.[d] ?? 0] as const)
    .filter(([, n]) => n > 0)
    .map(([d, n]) => `${n} ${d}`);
  return `${result.usage.turns} model turns, ${s?.calls ?? result.journal.length} tool calls${decided.length ? ` (${decided.join(', ')})` : ''}`;
}

/**
 * Answers each call that waits for a person's approval while the run goes on: it is printed with the
 * command a person would use, and denied (a 135M model's refund is not one to approve unread).
 */
function denyApprovals(client: Client, workflowId: string, print: (line: string) => void): () => Promise<void> {
  let done = false;
  const answered = new Set<string>();
  const loop = (async () => {
    while (!done) {
      const pending = await pendingDecisions(client, workflowId).catch(() => []);
      for (const p of pending) {
        if (p.kind !== 'approval' || answered.has(p.effectKey)) continue;
        answered.add(p.effectKey);
        print(`  #${p.position} ${p.toolId}  waits for a person (${p.rule ?? 'approval'}): ${p.reason}`);
        print(`    a person would answer: npx toolplane approve|deny ${workflowId} ${p.effectKey}`);
        await deny(client, workflowId, p.effectKey, {
          by: 'local-model example',
          reason: 'the example denies what a person would review',
        }).catch(() => undefined);
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  })();
  return async () => {
    done = true;
    await loop;
  };
}

/** Runs the example; resolves with the server (still up when this script started it) and whether every run ended. */
export async function runLocalModelExample(print: (line: string) => void = console.log): Promise<{
  server: TemporalServer;
  ok: boolean;
}> {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  let t = Date.now();
  const modelPath = await ensureModel(print);
  print(`model: ${MODEL_PACKAGE.modelId} (${path.basename(modelPath)}), ready in ${seconds(Date.now() - t)}`);
  t = Date.now();
  let endpoint: LocalEndpoint | undefined;
  let server: TemporalServer | undefined;
  let native: NativeConnection | undefined;
  try {
    endpoint = await startLocalEndpoint(modelPath);
    print(`endpoint "${LOCAL_ENDPOINT}": ${endpoint.baseUrl} (openai-compatible), up in ${seconds(Date.now() - t)}`);
    server = await connectOrStart({ dynamicConfig: EAGER_ACTIVITIES });
    const manifest = withLocalModel(loadManifest(path.join(desk, 'manifest.yaml')).manifest, endpoint.baseUrl);
    native = await NativeConnection.connect(serverConnectOptions(server));
    const client = new Client({
      connection: await Connection.connect(serverConnectOptions(server)),
      namespace: server.namespace,
    });
    const taskQueue = `toolplane-local-model-${process.pid}`;
    const worker = await createWorker({
      connection: native,
      namespace: server.namespace,
      taskQueue,
      manifest,
      tools: createTools(),
    });
    let ok = true;
    const stamp = Date.now().toString(36);
    const srv = server;
    await worker.runUntil(async () => {
      for (const task of TASKS) {
        const { prompt } = JSON.parse(fs.readFileSync(path.join(desk, 'scripts', task), 'utf8')) as { prompt: string };
        const handle = await startAgentRun(
          client,
          {
            prompt,
            principal: 'agent:support-desk',
            manifestDigest: manifestDigest(manifest),
            model: { endpoint: LOCAL_ENDPOINT },
            limits: { maxTurns: MAX_TURNS },
          },
          { taskQueue, workflowId: `local-model-${path.basename(task, '.json')}-${stamp}` },
        );
        print(`\n${handle.workflowId}: "${prompt}"`);
        const started = Date.now();
        const stopDenying = denyApprovals(client, handle.workflowId, print);
        try {
          const result = await follow<AgentRunResult>(handle, print);
          print(`  ${result.status}: ${result.answer ?? result.reason}`);
          print(`  ${tally(result)}, in ${seconds(Date.now() - started)}`);
        } catch (err) {
          ok = false;
          print(`  failed: ${err instanceof Error ? err.message : String(err)}`);
        } finally {
          await stopDenying();
        }
        const url = runUrl(srv, handle.workflowId, handle.firstExecutionRunId);
        print(url ? `  Web UI: ${url}` : '  Web UI: set TEMPORAL_UI_URL to print a link to this run');
      }
    });
    await client.connection.close();
    return { server, ok };
  } catch (err) {
    await server?.stop();
    throw err;
  } finally {
    await native?.close();
    await endpoint?.stop();
  }
}
