/**
 * The gateway bench alone (bench/gateway.ts), against a dev server of its own: to iterate with small
 * counts without the rest of `npm run bench`. Prints the table and the goals; writes no results file.
 *
 *   npx tsx bench/gateway-run.ts [--rounds 3] [--calls 50] [--clients 4] [--per-client 25] [--no-eager]
 */
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { Command } from 'commander';
import { loadManifest } from '../runtime/manifest-file';
import { benchServer } from './bench-server';
import { benchBundle } from './bench-worker';
import { gatewayBench, gatewayRows } from './gateway';

async function main(): Promise<void> {
  const o = new Command()
    .option('--rounds <n>', 'alternating rounds', '3')
    .option('--calls <n>', 'sequential calls per side and round (latency)', '50')
    .option('--clients <n>', 'concurrent clients per side and round (calls/s)', '4')
    .option('--per-client <n>', 'calls each concurrent client makes', '25')
    .option('--no-eager', 'run the dev server without eager activity execution')
    .parse(process.argv)
    .opts<{ rounds: string; calls: string; clients: string; perClient: string; eager: boolean }>();
  const load = [os.loadavg()];
  const server = await benchServer('gwbench', o.eager);
  try {
    const workflowBundle = await benchBundle();
    const native = await NativeConnection.connect({ address: server.address });
    const client = new Client({ connection: await Connection.connect({ address: server.address }) });
    const manifest = loadManifest(path.resolve(__dirname, '..', 'examples', 'support-desk', 'manifest.yaml')).manifest;
    const f = await gatewayBench(
      {
        client,
        native,
        workflowBundle,
        manifest,
        rounds: Number(o.rounds),
        calls: Number(o.calls),
        clients: Number(o.clients),
        perClient: Number(o.perClient),
      },
      (line) => process.stderr.write(`${line}\n`),
    );
    load.push(os.loadavg());
    for (const line of gatewayRows(f)) console.log(line);
    console.log(`load average: ${load.map((l) => l[0]!.toFixed(2)).join(' → ')}`);
    for (const [goal, ok] of Object.entries(f.goals)) console.log(`${ok ? 'PASS' : 'FAIL'}  ${goal}`);
    await native.close();
    await client.connection.close();
  } finally {
    await server.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
