// MCP servers as tool sources: real server processes over stdio.
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { detachedCtx } from '../../activities/ctx';
import { createMcpTool, SourceDrift } from '../../activities/mcp/mcp-tools';
import { CatalogError } from '../../catalog/errors';
import { manifestDigest } from '../../catalog/digest';
import { loadManifest } from '../../runtime/manifest-file';
import type { Manifest, ServerDecl } from '../../catalog/manifest';
import { KeyedLog } from '../../examples/support-desk/keyed-log';
import type { AgentRunInput, AgentRunResult } from '../../workflows/agent/run';
import { idempotencyKey } from '../../common/effect-key';
import type { ToolRunResult } from '../../workflows/tool-run';
import { harness, testDir, type Harness } from '../support/env';
import { historyOf } from '../support/history';

const root = path.resolve(__dirname, '..', '..');
const manifest: Manifest = loadManifest(path.join(root, 'examples', 'mcp-ledger', 'manifest.yaml')).manifest;
const quiet = () => {};

describe('MCP servers as tool sources', () => {
  let h: Harness;
  const dir = testDir('mcp');
  const ledger = new KeyedLog<{ idempotencyKey: string; account: string; amount_cents: number }>(dir, 'ledger');

  beforeAll(async () => {
    process.env.TOOLPLANE_STORE_DIR = dir;
    h = await harness(`mcp-${randomUUID()}`);
    await h.runWorker({ manifest, tools: [], log: quiet });
  });
  afterAll(async () => {
    delete process.env.LEDGER_RUGPULL;
    await h.close();
  });

  async function toolRun(calls: { toolId: string; args: unknown }[]) {
    const workflowId = `mcp-${randomUUID()}`;
    const result: ToolRunResult = await h.client.workflow.execute('toolRun', {
      taskQueue: h.taskQueue,
      workflowId,
      args: [
        { manifest, grants: manifest.tools.map((t) => t.id), principal: 'agent:test', calls, continueOnError: true },
      ],
    });
    return { result, workflowId };
  }

  it('calls a declared tool with the idempotency key in _meta; the server records it once', async () => {
    const account = `acct-${randomUUID()}`;
    const { result, workflowId } = await toolRun([
      { toolId: 'tool://ledger/add_entry', args: { account, amount_cents: 700, memo: 'mcp' } },
      { toolId: 'tool://ledger/list_entries', args: { account } },
    ]);
    expect(result.status).toBe('completed');
    const landed = ledger.all().filter((e) => e.account === account);
    expect(landed).toHaveLength(1);
    expect(landed[0]!.idempotencyKey).toBe(idempotencyKey(workflowId, result.journal[0]!.effectKey!));
    expect(result.outputs[1]).toEqual({ entries: [{ id: landed[0]!.id, amount_cents: 700, memo: 'mcp' }] });
  });

  it('keeps a tool the server offers but the manifest does not declare unreachable', async () => {
    const { result } = await toolRun([{ toolId: 'tool://ledger/undeclared_admin', args: {} }]);
    expect(result.journal[0]).toMatchObject({
      decision: 'refused',
      rule: 'unreachable',
      reason: expect.stringContaining('undeclared'),
    });
  });

  it('refuses to start a worker when a declared tool changed on the server (rug pull), with both digests', async () => {
    process.env.LEDGER_RUGPULL = '1';
    try {
      const h2 = await harness(`rug-${randomUUID()}`);
      const err = await h2.startWorker({ manifest, tools: [], log: quiet }).catch((e: unknown) => e);
      await h2.close();
      expect(CatalogError.is(err)).toBe(true);
      expect(err).toBeInstanceOf(SourceDrift);
      expect((err as SourceDrift).message).toMatch(
        /tool:\/\/ledger\/add_entry: declared sha256:[0-9a-f]{64}, served sha256:[0-9a-f]{64}/,
      );
    } finally {
      delete process.env.LEDGER_RUGPULL;
    }
  });

  it('refuses a call when the definition changed after the worker started, and sends nothing', async () => {
    const account = `acct-${randomUUID()}`;
    process.env.LEDGER_RUGPULL = '1';
    try {
      const { result } = await toolRun([
        { toolId: 'tool://ledger/add_entry', args: { account, amount_cents: 1, memo: 'x' } },
      ]);
      expect(result.journal[0]).toMatchObject({
        outcome: 'failed',
        error: { message: expect.stringMatching(/declared sha256:[0-9a-f]{64}, served sha256:[0-9a-f]{64}/) },
      });
    } finally {
      delete process.env.LEDGER_RUGPULL;
    }
    expect(ledger.all().filter((e) => e.account === account)).toEqual([]);
  });

  it('answers reconcile through the tool the server declares for it', async () => {
    const server = manifest.servers.ledger as Extract<ServerDecl, { kind: 'mcp_stdio' }>;
    const tool = createMcpTool(
      manifest.tools.find((t) => t.id === 'tool://ledger/add_entry')!,
      server,
      quiet,
    );
    const key = `tp-${randomUUID()}`;
    const ctx = detachedCtx({
      idempotencyKey: key,
      effectKey: 'ek-test',
      toolId: 'tool://ledger/add_entry',
      principal: 'p',
    });
    expect(await tool.reconcile!(ctx, key)).toEqual({ status: 'not_landed' });
    const out = (await tool.call(ctx, { account: 'acct-rec', amount_cents: 5 })) as { entry_id: string };
    expect(await tool.reconcile!(ctx, key)).toEqual({
      status: 'landed',
      output: { entry_id: out.entry_id, duplicate: false },
    });
  });

  it('never lets server annotations relax the declared safety class', () => {
    const addEntry = manifest.tools.find((t) => t.id === 'tool://ledger/add_entry')!;
    expect(addEntry.annotations).toMatchObject({ idempotentHint: true, destructiveHint: false });
    expect(addEntry.safety).toBe('mutating');
  });

  it('passes rich output (text and image blocks) to the model intact and keeps it in history', async () => {
    const workflowId = `rich-${randomUUID()}`;
    const input: AgentRunInput = {
      prompt: 'Chart acct-1.',
      principal: 'agent:test',
      grants: ['tool://ledger/chart'],
      manifestDigest: manifestDigest(manifest),
      model: {
        endpoint: 'scripted',
        script: [{ tool_calls: [{ name: 'ledger__chart', arguments: { account: 'acct-1' } }] }, { final: 'here' }],
      },
    };
    const result: AgentRunResult = await h.client.workflow.execute('agentRun', {
      taskQueue: h.taskQueue,
      workflowId,
      args: [input],
    });
    expect(result.status).toBe('completed');
    const events = await historyOf(h.client, workflowId);
    const turns = events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'modelTurn');
    const last = JSON.parse(
      Buffer.from(turns.at(-1)!.activityTaskScheduledEventAttributes!.input!.payloads![0]!.data!).toString(),
    );
    // The turn sends the call's result by position; the model reads it as its JSON text.
    const toolMessage = last.results.values[0];
    expect(toolMessage.content).toEqual([
      { type: 'text', text: 'balance chart for acct-1' },
      { type: 'image', data: expect.stringMatching(/^iVBORw0KGgo/), mimeType: 'image/png' },
    ]);
  });
});
