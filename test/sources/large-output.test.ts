// A 10 MB tool result stays out of history; the model still reads all of it.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { FileBlobStore } from '../../activities/blob-store';
import { manifestDigest } from '../../catalog/digest';
import { loadManifest } from '../../catalog/manifest-file';
import type { AgentRunInput, AgentRunResult } from '../../workflows/agent-run';
import { harness, testDir, type Harness } from '../support/env';
import { startFakeChat } from '../support/fake-chat';
import { historyOf } from '../support/history';
import { temporal } from '@temporalio/proto';

const manifest = loadManifest(path.resolve(__dirname, '..', '..', 'examples', 'mcp-ledger', 'manifest.yaml')).manifest;

describe('large outputs', () => {
  let h: Harness;
  const blobDir = testDir('blobs');

  beforeAll(async () => {
    process.env.TOOLPLANE_STORE_DIR = testDir('large');
    h = await harness(`large-${randomUUID()}`);
    await h.runWorker({ manifest, tools: [], blobs: new FileBlobStore(blobDir), log: () => {} });
  });
  afterAll(async () => {
    await h.close();
  });

  it('stores a 10 MB result in the blob store, keeps a labelled reference in history, and the model reads it back', async () => {
    const chat = await startFakeChat((_req, turn) => (turn === 0 ? { tool_calls: [{ id: 'call_big', name: 'ledger__big_report', arguments: '{"size_mb": 10}' }] } : { content: 'read it all' }));
    try {
      const workflowId = `large-${randomUUID()}`;
      const input: AgentRunInput = {
        prompt: 'Fetch the big report.',
        principal: 'agent:test',
        grants: ['tool://ledger/big_report'],
        manifest,
        manifestDigest: manifestDigest(manifest),
        model: { provider: 'openai', model: 'gpt-test', baseUrl: chat.baseUrl },
      };
      const result: AgentRunResult = await h.client.workflow.execute('agentRun', { taskQueue: h.taskQueue, workflowId, args: [input] });
      expect(result).toMatchObject({ status: 'completed', answer: 'read it all' });

      const toolMessage = chat.requests[1]!.body.messages.find((m) => m.role === 'tool')!;
      expect(Buffer.byteLength(toolMessage.content!)).toBeGreaterThanOrEqual(10 * 1024 * 1024);

      const events = await historyOf(h.client, workflowId);
      const bytes = events.reduce((n, e) => n + temporal.api.history.v1.HistoryEvent.encode(e).finish().length, 0);
      expect(bytes).toBeLessThan(256 * 1024);
      const completed = events.find((e) => e.activityTaskCompletedEventAttributes && Buffer.from(e.activityTaskCompletedEventAttributes.result!.payloads![0]!.data!).toString().includes('$blob'))!;
      const ref = JSON.parse(Buffer.from(completed.activityTaskCompletedEventAttributes!.result!.payloads![0]!.data!).toString()).output;
      expect(ref).toMatchObject({ $blob: expect.stringMatching(/^sha256:[0-9a-f]{64}$/), bytes: expect.any(Number), mediaType: 'application/json' });
      expect(ref.bytes).toBeGreaterThan(10 * 1024 * 1024);
      const hex = ref.$blob.slice('sha256:'.length);
      expect(fs.statSync(path.join(blobDir, hex.slice(0, 2), hex)).size).toBe(ref.bytes);
      // The reference keeps the call's labels: the result is still the tool's untrusted output.
      expect(result.journal[0]).toMatchObject({ toolId: 'tool://ledger/big_report', outcome: 'ok' });
    } finally {
      await chat.close();
    }
  });

  it('refuses a corrupted blob rather than handing the model something else', async () => {
    const store = new FileBlobStore(testDir('blobs-corrupt'));
    const ref = await store.put(Buffer.from('"original"'));
    const hex = ref.slice('sha256:'.length);
    fs.writeFileSync(path.join(store.dir, hex.slice(0, 2), hex), '"tampered"');
    await expect(store.get(ref)).rejects.toThrow(/corrupt/);
  });
});
