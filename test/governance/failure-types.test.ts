// Failures on the safety path keep their true type: an output the plane could not store after the
// call landed is not the tool's failure and is never resent; a delegated child's InDoubt stays InDoubt.
import { randomUUID } from 'node:crypto';
import { FileBlobStore, type BlobStore } from '../../activities/blob-store';
import type { Tool } from '../../activities/tool';
import { ToolInDoubt } from '../../activities/tool-errors';
import { ToolDecl, type Manifest, type ToolDeclInput } from '../../catalog/manifest';
import { runAgent } from '../support/agent';
import { harness, testDir, type Harness } from '../support/env';
import { historyOf, scheduledActivities } from '../support/history';
import { journalQuery } from '../../workflows/journal-query';

const decls: ToolDeclInput[] = [
  {
    id: 'tool://vault/export',
    description: 'Exports a large report and records that it did.',
    input_schema: { type: 'object', properties: { size: { type: 'number' } }, required: ['size'] },
    safety: 'idempotent',
    honours_idempotency_key: true,
    recovery: 'retry',
  },
  {
    id: 'tool://wire/send',
    description: 'Sends a wire; its provider sometimes cannot tell whether it went out.',
    input_schema: { type: 'object', properties: { note: { type: 'string' } }, required: ['note'] },
    safety: 'mutating',
    recovery: 'fail',
    concurrency: { class: 'independent' },
  },
];
const manifest: Manifest = {
  version: 1,
  name: 'failures',
  servers: { vault: { kind: 'in_process' }, wire: { kind: 'in_process' } },
  tools: decls.map((d) => ToolDecl.parse(d)),
};

const exports: string[] = [];
const sends: string[] = [];
const tools: Tool[] = [
  {
    origin: 'builtin',
    def: () => ({
      id: 'tool://vault/export',
      description: decls[0]!.description,
      inputSchema: decls[0]!.input_schema,
      safety: 'idempotent',
    }),
    async call(ctx, input) {
      exports.push(ctx.idempotencyKey);
      return 'x'.repeat((input as { size: number }).size);
    },
  },
  {
    origin: 'builtin',
    def: () => ({
      id: 'tool://wire/send',
      description: decls[1]!.description,
      inputSchema: decls[1]!.input_schema,
      safety: 'mutating',
    }),
    async call(_ctx, input) {
      sends.push((input as { note: string }).note);
      throw new ToolInDoubt('the provider timed out after receiving the wire');
    },
  },
];

/** A store whose disk is full. */
const full: BlobStore = {
  put: async () => {
    throw new Error('ENOSPC: no space left on device');
  },
  get: async () => {
    throw new Error('never stored');
  },
};

describe('failures keep their true type', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await harness(`failures-${randomUUID()}`);
    // Outputs go to the full disk; the conversation is kept elsewhere, so the run itself goes on.
    await h.runWorker({
      manifest,
      tools,
      blobs: full,
      transcripts: new FileBlobStore(testDir('transcripts')),
      largeOutputBytes: 64,
    });
  });
  afterAll(() => h.close());

  it('an output that could not be stored after the call landed: OutputLost, sent once, not blamed on the tool', async () => {
    const { result, workflowId } = await runAgent(h, manifest, {
      prompt: 'Export the report, size 1000.',
      turns: [{ tool_calls: [{ name: 'vault__export', arguments: { size: 1000 } }] }, { final: 'x' }],
    });
    expect(result.journal[0]).toMatchObject({
      outcome: 'failed',
      error: {
        code: 'OutputLost',
        message: expect.stringContaining('landed, but its output could not be stored: ENOSPC'),
      },
    });
    expect(exports).toHaveLength(1);
    const events = await historyOf(h.client, workflowId);
    expect(scheduledActivities(events).filter((a) => a.type === 'performTool')).toHaveLength(1);
    expect(
      events.filter((e) => e.activityTaskStartedEventAttributes && e.activityTaskStartedEventAttributes.attempt! > 1),
    ).toEqual([]);
  });

  it("a delegated child's InDoubt reaches the parent as InDoubt, not Failed", async () => {
    const { result, workflowId } = await runAgent(h, manifest, {
      prompt: 'Send a wire noted "rent".',
      turns: [{ tool_calls: [{ name: 'wire__send', arguments: { note: 'rent' } }] }, { final: 'x' }],
    });
    expect(result.journal[0]).toMatchObject({
      toolId: 'tool://wire/send',
      outcome: 'in_doubt',
      error: { code: 'InDoubt' },
    });
    expect(sends).toEqual(['rent']);
    // The parent sent nothing itself (attempts are sends); the child run sent it once and counts that send.
    expect(result.journal[0]!.attempts).toBe(0);
    const child = h.client.workflow.getHandle(`${workflowId}/delegated-${result.journal[0]!.position}`);
    expect((await child.query(journalQuery))[0]).toMatchObject({ attempts: 1, outcome: 'in_doubt' });
  });
});
