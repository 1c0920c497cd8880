// The S3 blob store against a real SeaweedFS: the contract FileBlobStore keeps (run-scoped, content-addressed,
// corruption refused, an unwritable store refused at worker start), and a large tool output an agent run
// stores in the bucket and the next model turn reads back; two worker processes as replicas: one stores a large
// output the other reads, and one makes a refund and dies, the other reconciles it through the shared stores.
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import {
  CreateBucketCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { temporal } from '@temporalio/proto';
import { BlobNotFound } from '../../activities/blob-store';
import { S3BlobStore, S3BlobStoreMisconfigured } from '../../activities/s3-blob-store';
import type { Tool } from '../../activities/tool';
import { loadManifest } from '../../runtime/manifest-file';
import { ToolDecl, type Manifest } from '../../catalog/manifest';
import type { AgentRunInput, AgentRunResult } from '../../workflows/agent/run';
import type { ToolRunInput, ToolRunResult } from '../../workflows/tool-run';
import { idempotencyKey } from '../../common/effect-key';
import { ActivityName } from '../../common/names';
import { paymentsStore } from '../../examples/support-desk/payments-store';
import { findWeed, startSeaweed, type Seaweed } from '../../scripts/seaweedfs';
import { freePort } from '../../scripts/dev-server';
import { spawnWorker, writeManifest, type WorkerProcess } from '../../scripts/worker-process';
import { BIG_REPORT_BYTES } from '../fixtures/large-output-tools';
import { exampleManifest, harness, testAddress, testDir, type Harness } from '../support/env';
import { startFakeChat, type ChatRequest, type Reply } from '../support/fake-chat';
import { historyOf, startedBy } from '../support/history';
import { waitFor } from '../support/wait';

const ledger = loadManifest(path.resolve(__dirname, '..', '..', 'examples', 'mcp-ledger', 'manifest.yaml')).manifest;
const echo: Tool = {
  origin: 'builtin',
  def: () => ({
    id: 'tool://forge/echo',
    description: 'Returns what it is given.',
    inputSchema: { type: 'object', properties: { size: { type: 'number' } }, required: ['size'] },
    safety: 'read_only',
  }),
  call: async (_ctx, input) => ({ report: 'r'.repeat((input as { size: number }).size) }),
};

// The suite's setup may include a cold build of weed on a loaded two-core machine (16 min seen); a cached weed is
// found in well under a second.
const WEED_BUILD_TIMEOUT_MS = 45 * 60_000;

describe('S3BlobStore (SeaweedFS)', () => {
  let seaweed: Seaweed;
  let s3: S3Client;
  const bucket = `toolplane-${randomUUID().slice(0, 8)}`;
  const store = (prefix = 'contract/'): S3BlobStore =>
    new S3BlobStore({ bucket, prefix, endpoint: seaweed.endpoint, credentials: seaweed.credentials });
  const keys = async (prefix: string): Promise<string[]> =>
    ((await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }))).Contents ?? []).map((o) => o.Key!);

  beforeAll(async () => {
    // A fresh machine has no weed: the suite obtains it itself (the cache outside the clone, else a Go build of
    // many minutes, one per machine at a time), its progress written straight to stderr, past jest's console
    // buffering. Without go or the module proxy it fails here, saying what it tried.
    const weed = await findWeed((line) => process.stderr.write(`[seaweedfs] ${line}\n`));
    seaweed = await startSeaweed({ weed });
    s3 = new S3Client({
      region: 'us-east-1',
      endpoint: seaweed.endpoint,
      forcePathStyle: true,
      credentials: seaweed.credentials,
    });
    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  }, WEED_BUILD_TIMEOUT_MS);
  afterAll(async () => {
    s3?.destroy();
    await seaweed?.stop();
  });

  describe('contract', () => {
    it('stores bytes under the run that put them; the same bytes twice are one object', async () => {
      const blobs = store('same/');
      const bytes = Buffer.from(JSON.stringify({ rows: Array.from({ length: 1000 }, (_, i) => i) }));
      const ref = await blobs.put(bytes, 'run-1');
      expect(ref).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect(await blobs.put(Buffer.from(bytes), 'run-1')).toBe(ref);
      expect((await blobs.get(ref, 'run-1')).equals(bytes)).toBe(true);
      expect(await keys('same/')).toEqual([expect.stringMatching(new RegExp(`^same/[0-9a-f]{32}/${ref.slice(7)}$`))]);
    });

    it("does not read another run's blob, nor one never stored", async () => {
      const blobs = store();
      const ref = await blobs.put(Buffer.from('"scoped"'), 'run-a');
      await expect(blobs.get(ref, 'run-b')).rejects.toThrow(BlobNotFound);
      await expect(blobs.get(`sha256:${'0'.repeat(64)}`, 'run-a')).rejects.toMatchObject({ code: 'BlobNotFound' });
      await expect(blobs.get('../../etc/passwd', 'run-a')).rejects.toThrow(/not a blob reference/);
    });

    it('refuses a corrupted object rather than returning something else', async () => {
      const blobs = store('corrupt/');
      const ref = await blobs.put(Buffer.from('"original"'), 'run-1');
      const [key] = await keys('corrupt/');
      await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: Buffer.from('"tampered"') }));
      await expect(blobs.get(ref, 'run-1')).rejects.toThrow(/corrupt/);
    });

    it('check() passes on a writable bucket and leaves nothing behind', async () => {
      await store('probe/').check();
      expect(await keys('probe/')).toEqual([]);
    });

    it('check() names the bucket and endpoint when the bucket is missing or the endpoint does not answer', async () => {
      const missing = new S3BlobStore({
        bucket: 'no-such-bucket',
        endpoint: seaweed.endpoint,
        credentials: seaweed.credentials,
      });
      await expect(missing.check()).rejects.toMatchObject({
        code: 'S3BlobStoreUnavailable',
        data: { bucket: 'no-such-bucket', endpoint: seaweed.endpoint },
      });
      const closed = `http://127.0.0.1:${await freePort()}`;
      const silent = new S3BlobStore({ bucket, endpoint: closed, credentials: seaweed.credentials });
      const err = (await silent.check().catch((e: unknown) => e)) as Error;
      expect(err).toMatchObject({ code: 'S3BlobStoreUnavailable', data: { bucket, endpoint: closed } });
      expect(err.message).toContain(`bucket ${bucket} at ${closed}`);
      missing.destroy();
      silent.destroy();
    });

    it('a store without a bucket is refused when it is made, naming the setting', () => {
      const saved = process.env.TOOLPLANE_S3_BUCKET;
      delete process.env.TOOLPLANE_S3_BUCKET;
      try {
        expect(() => new S3BlobStore({ endpoint: seaweed.endpoint })).toThrow(S3BlobStoreMisconfigured);
        expect(() => new S3BlobStore({ endpoint: seaweed.endpoint })).toThrow(/TOOLPLANE_S3_BUCKET/);
      } finally {
        if (saved !== undefined) process.env.TOOLPLANE_S3_BUCKET = saved;
      }
    });
  });

  describe('in a worker', () => {
    let h: Harness;
    let chat: Awaited<ReturnType<typeof startFakeChat>>;
    let manifest: Manifest;
    let reply: (req: ChatRequest, turn: number) => Reply = () => ({ content: 'idle' });

    beforeAll(async () => {
      chat = await startFakeChat((req, turn) => reply(req, turn));
      manifest = {
        ...ledger,
        servers: { ...ledger.servers, forge: { kind: 'in_process' } },
        tools: [
          ...ledger.tools,
          ToolDecl.parse({
            id: 'tool://forge/echo',
            description: 'Returns what it is given.',
            input_schema: { type: 'object', properties: { size: { type: 'number' } }, required: ['size'] },
            safety: 'read_only',
            recovery: 'retry',
          }),
        ],
        models: { fake: { provider: 'openai-compatible', base_url: chat.baseUrl, models: ['gpt-test'] } },
      };
      h = await harness(`s3-${randomUUID()}`);
    });
    afterAll(async () => {
      await h?.close();
      await chat?.close();
    });

    it('refuses to start when the bucket cannot be written, naming bucket and endpoint', async () => {
      const blobs = new S3BlobStore({
        bucket: 'absent-bucket',
        endpoint: seaweed.endpoint,
        credentials: seaweed.credentials,
      });
      const err = await h.startWorker({ manifest, tools: [echo], blobs, log: () => {} }).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'S3BlobStoreUnavailable', data: { bucket: 'absent-bucket' } });
      expect((err as Error).message).toContain(seaweed.endpoint);
      blobs.destroy();
    });

    it('a tool output over the threshold goes to the bucket, history keeps a reference, the next turn reads it all', async () => {
      const prefix = `runs-${randomUUID().slice(0, 8)}/`;
      await h.runWorker({ manifest, tools: [echo], blobs: store(prefix), largeOutputBytes: 4096, log: () => {} });
      let first = true;
      reply = () => {
        if (!first) return { content: 'read it all' };
        first = false;
        return { tool_calls: [{ id: 'call_1', name: 'forge__echo', arguments: JSON.stringify({ size: 300_000 }) }] };
      };
      const before = chat.requests.length;
      const workflowId = `s3-large-${randomUUID()}`;
      const input: AgentRunInput = {
        prompt: 'Echo a big report.',
        principal: 'agent:test',
        model: { endpoint: 'fake' },
      };
      const result: AgentRunResult = await h.client.workflow.execute('agentRun', {
        taskQueue: h.taskQueue,
        workflowId,
        args: [input],
      });
      expect(result).toMatchObject({ status: 'completed', answer: 'read it all' });

      // The model's second turn saw the whole output.
      const second = chat.requests.slice(before)[1]!;
      const toolMessage = second.body.messages.find((m) => m.role === 'tool')!.content!;
      expect(JSON.parse(toolMessage)).toEqual({ report: 'r'.repeat(300_000) });

      // History holds a reference, not the 300 KB.
      const events = await historyOf(h.client, workflowId);
      const bytes = events.reduce((n, e) => n + temporal.api.history.v1.HistoryEvent.encode(e).finish().length, 0);
      expect(bytes).toBeLessThan(200_000);
      const completed = events
        .map((e) => e.activityTaskCompletedEventAttributes?.result?.payloads?.[0]?.data)
        .filter((d): d is Uint8Array => !!d)
        .map((d) => Buffer.from(d).toString())
        .find((s) => s.includes('"stored"'))!;
      const stored = (JSON.parse(completed) as { stored: { ref: string; scope: string } }).stored;
      expect(stored).toMatchObject({ ref: expect.stringMatching(/^sha256:[0-9a-f]{64}$/), scope: workflowId });

      // The bytes are in the bucket, under the run's key.
      const key = (await keys(prefix)).find((k) => k.endsWith(stored.ref.slice(7)))!;
      expect(key).toBeDefined();
      const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      expect(JSON.parse(Buffer.from(await object.Body!.transformToByteArray()).toString())).toEqual({
        report: 'r'.repeat(300_000),
      });
    });
  });

  describe('two worker processes sharing the bucket', () => {
    let h: Harness;
    let chat: Awaited<ReturnType<typeof startFakeChat>>;
    const workers: WorkerProcess[] = [];
    let aExited = false;
    let reply: (req: ChatRequest, turn: number) => Reply = () => ({ content: 'idle' });

    beforeAll(async () => {
      chat = await startFakeChat((req, turn) => reply(req, turn));
      h = await harness('unused');
    });
    afterAll(async () => {
      await Promise.all(workers.map((w) => w.stop()));
      await h?.close();
      await chat?.close();
    });

    /** A worker process as a replica: its own data directory, the bucket under `prefix` for blobs. */
    const replica = (o: {
      dir: string;
      name: string;
      manifestFile: string;
      taskQueue: string;
      prefix: string;
      storeDir: string;
      tools?: string[];
      killAt?: string;
    }): WorkerProcess => {
      const w = spawnWorker({
        address: testAddress(),
        workflowBundle: process.env.TOOLPLANE_TEST_BUNDLE,
        manifestFile: o.manifestFile,
        taskQueue: o.taskQueue,
        storeDir: o.storeDir,
        tools: o.tools,
        killAt: o.killAt,
        env: {
          TOOLPLANE_DATA_DIR: path.join(o.dir, o.name),
          TOOLPLANE_BLOB_DIR: path.join(o.dir, o.name, 'blobs'),
          TOOLPLANE_S3_BUCKET: bucket,
          TOOLPLANE_S3_PREFIX: o.prefix,
          TOOLPLANE_S3_ENDPOINT: seaweed.endpoint,
          AWS_REGION: 'us-east-1',
          AWS_ACCESS_KEY_ID: seaweed.credentials.accessKeyId,
          AWS_SECRET_ACCESS_KEY: seaweed.credentials.secretAccessKey,
          TOOLPLANE_SHUTDOWN_GRACE_TIME: '1s',
          TOOLPLANE_SHUTDOWN_FORCE_TIME: '3s',
        },
      });
      workers.push(w);
      return w;
    };

    it('one performs the large-output call, the other runs the next model turn on what it stored', async () => {
      const dir = testDir('s3-two-workers');
      const manifest: Manifest = {
        ...ledger,
        servers: { ...ledger.servers, forge: { kind: 'in_process' } },
        tools: [
          ...ledger.tools,
          ToolDecl.parse({
            id: 'tool://forge/big_report',
            description: 'Returns a report of about 300 KiB.',
            input_schema: { type: 'object', properties: { seed: { type: 'string' } }, required: ['seed'] },
            safety: 'read_only',
            recovery: 'retry',
          }),
        ],
        models: { fake: { provider: 'openai-compatible', base_url: chat.baseUrl, models: ['gpt-test'] } },
      };
      const manifestFile = writeManifest(dir, manifest);
      const taskQueue = `s3-two-${randomUUID()}`;
      const prefix = `two-${randomUUID().slice(0, 8)}/`;
      const spawn = (name: string) =>
        replica({
          dir,
          name,
          manifestFile,
          taskQueue,
          prefix,
          // Nothing on disk is shared: each worker has its own data directory; only the bucket is common.
          storeDir: path.join(dir, name),
          tools: [path.resolve(__dirname, '..', 'fixtures', 'large-output-tools')],
        });
      const a = spawn('a');
      void a.exited.then(() => (aExited = true));
      await waitFor('worker a polling', 60_000, () => a.output().includes('polling'));

      // Turn 1 asks for the report (worker a runs it). While worker a lives, the next turn fails and worker a
      // is stopped; the retry can only be answered once it is gone, so worker b runs it.
      let stopping = false;
      reply = (_req, turn) => {
        if (turn === 0)
          return { tool_calls: [{ id: 'call_1', name: 'forge__big_report', arguments: '{"seed":"0123456789"}' }] };
        if (!aExited) {
          if (!stopping) {
            stopping = true;
            a.child.kill('SIGTERM');
          }
          return { status: 500, body: '{"error":{"message":"not this worker"}}' };
        }
        return { content: 'read it all' };
      };
      const workflowId = `s3-two-${randomUUID()}`;
      const input: AgentRunInput = {
        prompt: 'Fetch the big report.',
        principal: 'agent:test',
        model: { endpoint: 'fake' },
      };
      const handle = await h.client.workflow.start('agentRun', { taskQueue, workflowId, args: [input] });
      await waitFor('worker a stopped', 120_000, () => aExited);
      const b = spawn('b');
      const result: AgentRunResult = await handle.result();
      expect(result).toMatchObject({ status: 'completed', answer: 'read it all' });

      const answered = chat.requests.filter((r) => r.body.messages.some((m) => m.role === 'tool')).at(-1)!;
      const toolMessage = answered.body.messages.find((m) => m.role === 'tool')!.content!;
      expect(JSON.parse(toolMessage)).toEqual({ report: '0123456789'.repeat(BIG_REPORT_BYTES / 10) });

      // History says who did what: worker a the tool call, worker b the turn that read its output.
      const started = startedBy(await historyOf(h.client, workflowId));
      expect(started.filter((s) => s.type === 'performTool').map((s) => s.identity)).toEqual([
        expect.stringContaining(`${a.pid}@`),
      ]);
      expect(started.filter((s) => s.type === 'modelTurn').at(-1)!.identity).toContain(`${b.pid}@`);
      // And the bytes are in the bucket, not in either worker's directory.
      expect((await keys(prefix)).length).toBeGreaterThan(0);
    });

    it('a refund one replica made before it died is found by the reconcile on the other: one payment', async () => {
      const dir = testDir('s3-reconcile');
      const example = exampleManifest();
      // Timeouts short enough that the lost worker is noticed in seconds.
      const manifest: Manifest = {
        ...example,
        tools: example.tools.map((t) => ({ ...t, timeouts: { ...t.timeouts, start_to_close: '2s' } })),
      };
      const manifestFile = writeManifest(dir, manifest);
      const taskQueue = `s3-reconcile-${randomUUID()}`;
      const prefix = `reconcile-${randomUUID().slice(0, 8)}/`;
      // The example's stores are on one directory both replicas mount, as compose's shared volume.
      const stores = path.join(dir, 'shared-stores');
      const spawn = (name: string, killAt?: string) =>
        replica({ dir, name, manifestFile, taskQueue, prefix, storeDir: stores, killAt });
      const workflowId = `s3-reconcile-${randomUUID()}`;
      const memo = `reconcile-${randomUUID()}`;
      const input: ToolRunInput = {
        grants: manifest.tools.map((t) => t.id),
        principal: 'agent:test',
        calls: [
          {
            toolId: 'tool://payments/refund',
            args: { account_id: 'acct_alice_001', amount_cents: 2500, currency: 'EUR', memo },
          },
        ],
      };
      const handle = await h.client.workflow.start('toolRun', { taskQueue, workflowId, args: [input] });

      // Replica a refunds, and dies before it can report it: the payment is in the shared store, not in history.
      const a = spawn('a', 'after_commit');
      expect((await a.exited).signal).toBe('SIGKILL');
      expect(a.output()).toContain('SIGKILL at after_commit');
      expect(paymentsStore(stores).all()).toEqual([expect.objectContaining({ memo })]);

      const b = spawn('b');
      const result: ToolRunResult = await handle.result();
      expect(result.status).toBe('completed');
      expect(result.journal[0]).toMatchObject({ recovery: 'reconciled_landed', outcome: 'ok' });
      const landed = paymentsStore(stores).all();
      expect(landed).toHaveLength(1);
      expect(landed[0]).toMatchObject({
        memo,
        idempotencyKey: idempotencyKey(workflowId, result.journal[0]!.effectKey!),
      });
      // Not sent again: the provider saw no repeat of the key.
      expect(paymentsStore(stores).repeats()).toBe(0);
      expect(result.outputs[0]).toEqual({ payment_id: landed[0]!.id, status: 'refunded', duplicate: false });

      // History: replica a performed the refund, replica b reconciled it.
      const started = startedBy(await historyOf(h.client, workflowId)).filter((s) => s.type !== ActivityName.Authorize);
      expect(started).toEqual([
        { type: 'performTool', identity: expect.stringContaining(`${a.pid}@`) },
        { type: 'reconcileTool', identity: expect.stringContaining(`${b.pid}@`) },
      ]);
    });
  });
});
