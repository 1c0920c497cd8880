/**
 * `npm start`: the main job. Connects to TEMPORAL_ADDRESS or starts a dev server, starts a worker
 * with the support-desk tools, runs the example and prints the result and its Web UI link.
 * On a terminal it keeps the server up for the Web UI until Ctrl-C; with --once or CI it exits.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { loadManifest } from '../catalog/manifest-file';
import { manifestDigest } from '../catalog/digest';
import { createTools } from '../examples/support-desk/tools';
import { createWorker, DEFAULT_TASK_QUEUE } from '../worker';
import { connectOrStart, runUrl } from './dev-server';
import { MANIFEST_DIGEST, PRINCIPAL } from '../workflows/search-attributes';

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger((process.env.TOOLPLANE_LOG_LEVEL as 'WARN' | undefined) ?? 'WARN') });
  const once = process.argv.includes('--once') || !!process.env.CI || !process.stdout.isTTY;
  const server = await connectOrStart();
  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    await server.stop();
    process.exit(code);
  };
  process.on('SIGINT', () => void stop(130));
  process.on('SIGTERM', () => void stop(143));

  const { manifest } = loadManifest(path.resolve(__dirname, '..', 'examples', 'support-desk', 'manifest.yaml'));
  const nativeConnection = await NativeConnection.connect({ address: server.address });
  const worker = await createWorker({ connection: nativeConnection, namespace: server.namespace, manifest, tools: createTools() });
  const client = new Client({ connection: await Connection.connect({ address: server.address }), namespace: server.namespace });

  const workflowId = `support-desk-${randomUUID().slice(0, 8)}`;
  const principal = 'agent:support-desk';
  const grants = manifest.tools.map((t) => t.id);
  const result = await worker.runUntil(async () => {
    const handle = await client.workflow.start('toolRun', {
      taskQueue: DEFAULT_TASK_QUEUE,
      workflowId,
      args: [
        {
          manifest,
          grants,
          principal,
          calls: [
            { toolId: 'tool://tickets/read_ticket', args: { ticket_id: 'T-100' } },
            { toolId: 'tool://crm/lookup_customer', args: { email: 'alice@example.com' } },
            { toolId: 'tool://payments/refund', args: { account_id: 'acct_alice_001', amount_cents: 2500, currency: 'EUR', memo: 'duplicate charge, order 5512' } },
            { toolId: 'tool://tickets/close_ticket', args: { ticket_id: 'T-100', resolution: 'Refunded the duplicate charge.' } },
          ],
        },
      ],
      typedSearchAttributes: [
        { key: PRINCIPAL, value: principal },
        { key: MANIFEST_DIGEST, value: manifestDigest(manifest) },
      ],
    });
    console.log(`run ${workflowId} started`);
    return { runId: handle.firstExecutionRunId, value: await handle.result() };
  });

  for (const e of result.value.journal) {
    console.log(`  #${e.position} ${e.toolId}  ${e.decision}  ${e.outcome}${e.recovery !== 'none' ? ` (${e.recovery})` : ''}`);
  }
  console.log(`run ${workflowId} ${result.value.status}`);
  const url = runUrl(server, workflowId, result.runId);
  console.log(url ? `Web UI: ${url}` : 'Web UI: set TEMPORAL_UI_URL to print a link to this run');
  await nativeConnection.close();
  if (once || !server.owned) return stop(result.value.status === 'completed' ? 0 : 1);
  console.log('The dev server keeps running so the Web UI can show the run. Ctrl-C to stop it.');
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
