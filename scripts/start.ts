/**
 * `npm start`: the main job. Connects to TEMPORAL_ADDRESS (with TEMPORAL_TLS_* and TEMPORAL_API_KEY
 * on a secured server: inspect/connection.ts) or starts a dev server, starts a worker
 * with the support-desk tools, and runs the scripted support-desk agent twice: a refund that goes
 * through, and a ticket carrying an injected instruction that the plane refuses. Then a ledger
 * run through the example MCP server and a dormant extension. Prints each effect and the Web UI link. On a terminal it keeps the server up for the Web UI until Ctrl-C;
 * with --once, under CI or when output is not a terminal, it exits.
 *
 * It plays two parties, so on a secured cluster it may hold two tokens: TEMPORAL_API_KEY starts and
 * follows the runs (a run starter's), TOOLPLANE_WORKER_API_KEY, when set, is its worker's (else the
 * worker uses TEMPORAL_API_KEY too).
 */
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { loadManifest } from '../runtime/manifest-file';
import { generateIssuerKey, signCredential, startAgentRun } from '../client';
import { agentRunInput } from '../cli';
import { createTools } from '../examples/support-desk/tools';
import { follow } from '../inspect/follow';
import type { AgentRunResult } from '../workflows/agent/run';
import { createWorker } from '../worker';
import { ExtensionManager } from '../activities/extensions/extension-manager';
import { EXTENSION_RUNTIME } from '../catalog/capabilities';
import { connectOrStart, EAGER_ACTIVITIES, runUrl, serverConnectOptions } from './dev-server';

const desk = path.resolve(__dirname, '..', 'examples', 'support-desk');
const ledger = path.resolve(__dirname, '..', 'examples', 'mcp-ledger');
/** Tool sources' chatter (MCP servers starting) stays out of the demo's output unless asked for. */
const quietLog = (line: string) => {
  if (process.env.TOOLPLANE_VERBOSE) console.error(line);
};

/** Stops the dev server this script started, so a failed demo leaves none behind. */
let stopServer: (() => Promise<void>) | undefined;

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger((process.env.TOOLPLANE_LOG_LEVEL as 'ERROR' | undefined) ?? 'ERROR') });
  const once = process.argv.includes('--once') || !!process.env.CI || !process.stdout.isTTY;
  // A dev server we start runs with eager activity execution: one round trip less per call.
  const server = await connectOrStart({ dynamicConfig: EAGER_ACTIVITIES });
  stopServer = () => server.stop();
  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    await server.stop();
    process.exit(code);
  };
  process.on('SIGINT', () => void stop(130));
  process.on('SIGTERM', () => void stop(143));

  const options = serverConnectOptions(server);
  const workerKey = process.env.TOOLPLANE_WORKER_API_KEY;
  const nativeConnection = await NativeConnection.connect({ ...options, ...(workerKey ? { apiKey: workerKey } : {}) });
  const client = new Client({ connection: await Connection.connect(options), namespace: server.namespace });
  const runs = [
    {
      manifestFile: path.join(desk, 'manifest.yaml'),
      tools: createTools(),
      script: path.join(desk, 'scripts', 'refund.json'),
    },
    {
      manifestFile: path.join(desk, 'manifest.yaml'),
      tools: createTools(),
      script: path.join(desk, 'scripts', 'injected-ticket.json'),
    },
    {
      manifestFile: path.join(ledger, 'manifest.yaml'),
      tools: [],
      script: path.join(ledger, 'scripts', 'ledger.json'),
      capability: [EXTENSION_RUNTIME],
    },
  ];

  // The demo is its own issuer: a fresh key, trusted by the worker by its public JWKS; each run
  // carries a credential bound to its workflow id (a team wires its own issuer the same way).
  const issuer = await generateIssuerKey('toolplane-demo', 'demo-1');
  const audience = 'toolplane-demo-worker';
  let ok = true;
  for (const r of runs) {
    const { manifest } = loadManifest(r.manifestFile);
    const taskQueue = `toolplane-start-${manifest.name}-${process.pid}`;
    const extensions = new ExtensionManager(manifest, quietLog);
    const worker = await createWorker({
      connection: nativeConnection,
      namespace: server.namespace,
      taskQueue,
      manifest,
      tools: r.tools,
      extensions,
      log: quietLog,
      identity: { issuers: [{ issuer: issuer.issuer, audience, jwks: issuer.jwks }] },
    });
    await worker.runUntil(async () => {
      const input = agentRunInput(manifest, {
        manifest: r.manifestFile,
        model: `scripted:${r.script}`,
        principal: 'agent:support-desk',
        maxTurns: '20',
        capability: r.capability,
      });
      const workflowId = `${manifest.name}-${path.basename(r.script, '.json')}-${Date.now().toString(36)}`;
      input.credential = await signCredential(issuer, {
        audience,
        subject: input.principal!,
        workflowId,
        runInput: { workflowType: 'agentRun', input },
      });
      const handle = await startAgentRun(client, input, { taskQueue, workflowId });
      console.log(`\n${handle.workflowId}: "${input.prompt}"`);
      const result = await follow<AgentRunResult>(handle, (l) => console.log(l));
      console.log(`  ${result.status}: ${result.answer ?? result.reason}`);
      const url = runUrl(server, handle.workflowId, handle.firstExecutionRunId);
      console.log(url ? `  Web UI: ${url}` : '  Web UI: set TEMPORAL_UI_URL to print a link to this run');
      ok &&= result.status === 'completed';
    });
    await extensions.stopAll();
  }
  await nativeConnection.close();
  if (once || !server.owned) return stop(ok ? 0 : 1);
  console.log('\nThe dev server keeps running so the Web UI can show the runs. Ctrl-C to stop it.');
}

main().catch(async (err) => {
  console.error(err instanceof Error ? err.message : err);
  await stopServer?.();
  process.exit(1);
});
