// A run's conversation as the worker keeps it outside history: a first turn stores the run's context
// and its own segment at once, and whatever store keeps them, every segment names blobs the store
// holds, so another worker (or this one after a restart) reads the conversation back whole.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { FileBlobStore, blobRef, type BlobStore } from '../../activities/blob-store';
import { TranscriptStore, type TranscriptContext, type TranscriptSegment } from '../../activities/model/transcript';
import { runAgent } from '../support/agent';
import { supportDesk } from '../support/desk';
import { exampleManifest, harness, testDir, type Harness } from '../support/env';

/** Three turns: a lookup, two lookups, the answer. */
const script = {
  prompt: 'Look up alice@example.com, then bob@example.com and chen@example.com.',
  turns: [
    { tool_calls: [{ name: 'crm__lookup_customer', arguments: { email: 'alice@example.com' } }] },
    {
      tool_calls: [
        { name: 'crm__lookup_customer', arguments: { email: 'bob@example.com' } },
        { name: 'crm__lookup_customer', arguments: { email: 'chen@example.com' } },
      ],
    },
    { final: 'All three found.' },
  ],
};

type Stored = TranscriptContext | TranscriptSegment;

/** A store that names each blob by the order it came in, not by its content, as a user's own store may. */
function numberingStore(): BlobStore & { blobs: Map<string, { scope: string; bytes: Buffer }> } {
  const blobs = new Map<string, { scope: string; bytes: Buffer }>();
  return {
    blobs,
    put: async (bytes, scope) => {
      const ref = `n:${blobs.size + 1}`;
      blobs.set(ref, { scope, bytes: Buffer.from(bytes) });
      return ref;
    },
    get: async (ref, scope) => {
      const b = blobs.get(ref);
      if (!b || b.scope !== scope) throw new Error(`no blob ${ref}`);
      return b.bytes;
    },
  };
}

/** The segments among what a store holds, and the refs it holds, for one run. */
function segmentsOf(stored: [string, Stored][]): [string, TranscriptSegment][] {
  return stored.filter((e): e is [string, TranscriptSegment] => e[1].kind === 'segment');
}

describe("a run's transcript", () => {
  const manifest = exampleManifest();
  const { tools } = supportDesk(testDir('transcript-desk'));

  describe('in a store that names blobs its own way', () => {
    let h: Harness;
    const store = numberingStore();
    beforeAll(async () => {
      h = await harness(`transcript-numbering-${randomUUID()}`);
      await h.runWorker({ manifest, tools, transcripts: store });
    });
    afterAll(() => h.close());

    it('every segment names a context and a previous segment the store holds, as it named them', async () => {
      const { result, workflowId } = await runAgent(h, manifest, script);
      expect(result.status).toBe('completed');
      expect(result.journal.map((j) => j.outcome)).toEqual(['ok', 'ok', 'ok']);

      const stored = [...store.blobs]
        .filter(([, b]) => b.scope === workflowId)
        .map(([ref, b]): [string, Stored] => [ref, JSON.parse(b.bytes.toString('utf8'))]);
      const held = new Map(stored);
      const segments = segmentsOf(stored);
      expect(segments.map(([, s]) => s.turns).sort()).toEqual([1, 2, 3]);
      for (const [, s] of segments) {
        expect(held.get(s.context)?.kind).toBe('context');
        if (s.turns > 1) expect(held.get(s.prev!)).toMatchObject({ kind: 'segment', turns: s.turns - 1 });
      }
    });
  });

  describe("in toolplane's file store", () => {
    let h: Harness;
    const dir = testDir('transcript-files');
    beforeAll(async () => {
      h = await harness(`transcript-files-${randomUUID()}`);
      await h.runWorker({ manifest, tools, transcripts: new FileBlobStore(dir) });
    });
    afterAll(() => h.close());

    it('another reader finds the whole conversation: the context the first turn stored beside its segment, and each turn', async () => {
      const { result, workflowId } = await runAgent(h, manifest, script);
      expect(result.status).toBe('completed');

      // A reader with nothing in memory: what it finds is what landed on disk.
      const [runDir] = fs.readdirSync(dir).filter((d) => !d.startsWith('.'));
      const files = fs.readdirSync(path.join(dir, runDir!)).filter((f) => !f.endsWith('.tmp'));
      const stored = files.map((f): [string, Stored] => [
        `sha256:${f}`,
        JSON.parse(fs.readFileSync(path.join(dir, runDir!, f), 'utf8')),
      ]);
      const last = segmentsOf(stored).find(([, s]) => s.turns === 3);
      expect(last).toBeDefined();
      const reader = new TranscriptStore(new FileBlobStore(dir));
      const first = segmentsOf(stored).find(([, s]) => s.turns === 1)![1];
      const context = await reader.context(first.context, workflowId);
      expect(context.tools.map((t) => t.toolId).sort()).toEqual(manifest.tools.map((t) => t.id).sort());
      const messages = await reader.messages(last![0], workflowId);
      expect(messages.filter((m) => m.role === 'assistant').map((m) => m.toolCalls?.length ?? 0)).toEqual([1, 2, 0]);
      expect(messages.at(-1)).toMatchObject({ role: 'assistant', content: 'All three found.' });
      expect(messages.filter((m) => m.role === 'tool')).toHaveLength(3);
    });
  });
});

describe("toolplane's file store", () => {
  it('stores the same bytes put twice at once, and puts into a run directory removed since its last put', async () => {
    const dir = testDir('file-store');
    const store = new FileBlobStore(dir);
    const bytes = Buffer.from(JSON.stringify({ rows: Array.from({ length: 1000 }, (_, i) => i) }));
    const refs = await Promise.all([store.put(bytes, 'run-a'), store.put(bytes, 'run-a')]);
    expect(refs).toEqual([blobRef(bytes), blobRef(bytes)]);
    expect((await store.get(refs[0], 'run-a')).equals(bytes)).toBe(true);

    for (const d of fs.readdirSync(dir)) fs.rmSync(path.join(dir, d), { recursive: true, force: true });
    const other = Buffer.from('another output');
    const ref = await store.put(other, 'run-a');
    expect((await new FileBlobStore(dir).get(ref, 'run-a')).equals(other)).toBe(true);
    expect(fs.readdirSync(dir).flatMap((d) => fs.readdirSync(path.join(dir, d)))).toEqual([
      ref.slice('sha256:'.length),
    ]);
  });
});
