// A short worker of the team's own: its workflows, toolplane's plugin, one governed call.
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { loadManifest, ToolplanePlugin } from 'toolplane';
import { generateIssuerKey, readJournal, signCredential } from 'toolplane/client';
import { saved, tools } from './tools';

async function main(): Promise<void> {
  const address = process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233';
  const { manifest } = loadManifest(`${__dirname}/../manifest.yaml`);
  // The team's issuer (here a key made for the example; in production, its identity provider's JWKS).
  const issuer = await generateIssuerKey('https://auth.team.example', 'team-1');
  const identity = { issuers: [{ issuer: issuer.issuer, audience: 'notes-worker', jwks: issuer.jwks }] };
  const worker = await Worker.create({
    connection: await NativeConnection.connect({ address }),
    taskQueue: 'consumer',
    workflowsPath: require.resolve('./workflows'),
    plugins: [new ToolplanePlugin({ manifest, tools, identity })],
  });
  const client = new Client({ connection: await Connection.connect({ address }) });
  const workflowId = `consumer-${Date.now()}`;
  // The run's credential: user:team, for this worker's audience, bound to this workflow id and this
  // workflow (which binds no input of its own: its only argument is the credential).
  const credential = await signCredential(issuer, {
    audience: 'notes-worker',
    subject: 'user:team',
    workflowId,
    runInput: { workflowType: 'saveTwoNotes' },
  });
  const result = await worker.runUntil(
    // The Summary the Web UI shows is the starter's to give; the run labels itself with its principal.
    client.workflow.execute('saveTwoNotes', {
      taskQueue: 'consumer',
      workflowId,
      args: [credential],
      staticSummary: 'Save two notes for user:team',
    }),
  );
  const journal = await readJournal(client, workflowId);
  console.log(JSON.stringify({ workflowId, result, saved: [...saved.values()], effects: journal.effects.length }));
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
