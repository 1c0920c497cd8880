// A short worker of the team's own: its workflows, toolplane's plugin, one governed call.
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { loadManifest, ToolplanePlugin } from 'toolplane';
import { readJournal } from 'toolplane/client';
import { saveNote, saved } from './tools';

async function main(): Promise<void> {
  const address = process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233';
  const { manifest } = loadManifest(`${__dirname}/../manifest.yaml`);
  const worker = await Worker.create({
    connection: await NativeConnection.connect({ address }),
    taskQueue: 'consumer',
    workflowsPath: require.resolve('./workflows'),
    plugins: [new ToolplanePlugin({ manifest, tools: [saveNote] })],
  });
  const client = new Client({ connection: await Connection.connect({ address }) });
  const workflowId = `consumer-${Date.now()}`;
  const result = await worker.runUntil(
    // The Summary the Web UI shows is the starter's to give; the run labels itself with its principal.
    client.workflow.execute('saveTwoNotes', {
      taskQueue: 'consumer',
      workflowId,
      args: ['user:team'],
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
