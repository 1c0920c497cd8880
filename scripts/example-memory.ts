/**
 * `npm run example:memory`: facts that carry their provenance, across runs. A worker that signs
 * `produced_by` with an Ed25519 key runs three scripted agent runs on the memory example:
 *   1. "remember my IBAN": the fact is stored with a reference whose arguments were all trusted;
 *   2. an inbox with an injected message: the model stores the attacker's IBAN, untrusted;
 *   3. a later run pays to the remembered IBAN (allowed) and to the injected one (refused).
 * Then it verifies the stored facts and a tampered copy side by side, as `toolplane verify` does.
 * Uses TEMPORAL_ADDRESS, or a dev server on TOOLPLANE_DEV_PORT (default 7233), started if none answers.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { manifestDigest } from '../catalog/digest';
import { loadManifest } from '../runtime/manifest-file';
import { startAgentRun } from '../client';
import type { ScriptTurn } from '../common/wire';
import { dataDir } from '../activities/data-dir';
import { createTools, factStore, latestFact, paymentStore, type Fact } from '../examples/memory/tools';
import { defaultStoreDir } from '../examples/support-desk/keyed-log';
import { follow } from '../inspect/follow';
import { generateLedgerKey, loadLedgerKeyFile } from '../ledger/keys';
import { formatVerdict, verifyProducedBy } from '../ledger/verify';
import type { AgentRunResult } from '../workflows/agent/run';
import { createWorker } from '../worker';
import { connectOrStart, runUrl, serverConnectOptions } from './dev-server';

const example = path.resolve(__dirname, '..', 'examples', 'memory');

/** The demo's key: made once under the data directory, kept so earlier facts keep verifying. */
function demoKeys(dir: string): { keyFile: string; publicFile: string } {
  fs.mkdirSync(dir, { recursive: true });
  const keyFile = path.join(dir, 'ledger-keys.json');
  const publicFile = path.join(dir, 'ledger-public-keys.json');
  if (!fs.existsSync(keyFile)) {
    const { keyId, privateKey, publicKeys } = generateLedgerKey(`demo-${Date.now().toString(36)}`);
    fs.writeFileSync(keyFile, JSON.stringify({ keyId, privateKey, publicKeys }, null, 2), { mode: 0o600 });
  }
  fs.writeFileSync(publicFile, JSON.stringify({ publicKeys: loadLedgerKeyFile(keyFile).publicKeys }, null, 2));
  return { keyFile, publicFile };
}

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const server = await connectOrStart();
  const { keyFile, publicFile } = demoKeys(path.join(dataDir(), 'ledger'));
  const { signing, publicKeys } = loadLedgerKeyFile(keyFile);
  const storeDir = defaultStoreDir();
  const { manifest } = loadManifest(path.join(example, 'manifest.yaml'));
  const native = await NativeConnection.connect(serverConnectOptions(server));
  const client = new Client({
    connection: await Connection.connect(serverConnectOptions(server)),
    namespace: server.namespace,
  });
  const taskQueue = `toolplane-memory-${process.pid}`;
  const worker = await createWorker({
    connection: native,
    namespace: server.namespace,
    taskQueue,
    manifest,
    tools: createTools(storeDir),
    ledger: signing,
  });
  const paidBefore = paymentStore(storeDir).all().length;
  const stamp = Date.now().toString(36);
  let ok = true;
  await worker.runUntil(async () => {
    for (const name of ['remember-iban', 'inbox', 'pay-rent']) {
      const script = JSON.parse(fs.readFileSync(path.join(example, 'scripts', `${name}.json`), 'utf8')) as {
        prompt: string;
        turns: ScriptTurn[];
      };
      const handle = await startAgentRun(
        client,
        {
          prompt: script.prompt,
          principal: 'agent:memory',
          manifestDigest: manifestDigest(manifest),
          model: { endpoint: 'scripted', script: script.turns },
        },
        { taskQueue, workflowId: `memory-${name}-${stamp}` },
      );
      console.log(`\n${handle.workflowId}: "${script.prompt}"`);
      const result = await follow<AgentRunResult>(handle, (l) => console.log(l));
      console.log(`  ${result.status}: ${result.answer ?? result.reason}`);
      const url = runUrl(server, handle.workflowId, handle.firstExecutionRunId);
      if (url) console.log(`  Web UI: ${url}`);
      ok &&= result.status === 'completed';
    }
  });
  await native.close();

  const paid = paymentStore(storeDir).all().slice(paidBefore);
  console.log(
    `\npayments landed: ${paid.map((p) => `${p.amount_cents / 100} EUR to ${p.recipient}`).join(', ') || 'none'}`,
  );

  // The facts as stored, and a copy whose value was edited after the fact.
  const facts = factStore(storeDir);
  const mine = latestFact(facts, 'my_iban')!;
  const injected = latestFact(facts, 'landlord_iban')!;
  const tampered: Fact = { ...mine, args: { ...mine.args, value: 'GB29NWBK60161331926819' } };
  console.log('\nverifying the stored facts (public keys only):');
  for (const [label, fact] of [
    ['my_iban', mine],
    ['landlord_iban', injected],
    ['my_iban, value edited', tampered],
  ] as const) {
    const file = path.join(storeDir, `fact-${label.replace(/[^a-z_]+/g, '-')}.json`);
    fs.writeFileSync(file, JSON.stringify({ args: fact.args, produced_by: fact.produced_by }, null, 2));
    const verdict = await verifyProducedBy(client, fact.produced_by, { publicKeys, args: fact.args });
    console.log(
      `\n$ npx toolplane verify ${path.relative(process.cwd(), file)} --public-keys ${path.relative(process.cwd(), publicFile)}`,
    );
    console.log(formatVerdict(verdict));
  }
  await client.connection.close();
  await server.stop();
  process.exit(ok ? 0 : 1);
}

main().catch((err: unknown) => {
  // The cause says why (a server without toolplane's search attributes, an unreachable address, ...).
  for (let e = err as { message?: string; cause?: unknown } | undefined, depth = 0; e; e = e.cause as typeof e, depth++)
    console.error(`${'  '.repeat(depth)}${depth ? 'caused by ' : ''}${e.message ?? String(e)}`);
  process.exit(1);
});
