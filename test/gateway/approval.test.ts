// A call that asks a person, through the gateway: the MCP client is told the call waits (with the
// effect key and how an approver decides), a declared approver approves out of band (`toolplane approve`,
// or toolplane's client, which it runs), and the client learns the outcome by repeating the call
// under its key, or by waiting with a progressToken. The client itself is never asked.
import path from 'node:path';
import type { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { main } from '../../cli';
import { approve } from '../../inspect/decisions';
import type { Gateway } from '../../gateway/gateway';
import { loadManifest } from '../../runtime/manifest-file';
import { harness, testAddress, testDir, type Harness } from '../support/env';
import { supportDesk } from '../support/desk';
import { testIssuer, type TestIssuer } from '../support/identity';
import { waitFor } from '../support/wait';
import { deskBehindGateway, gatewayToken, mcpClient, sessionIdOf } from './support';

const manifest = loadManifest(
  path.resolve(__dirname, '..', '..', 'examples', 'support-desk', 'manifest.identity.yaml'),
).manifest;
const TICKET_KEY = Buffer.alloc(32, 9).toString('base64url');
let h: Harness;
let issuer: TestIssuer;
let gateway: Gateway;
let desk: ReturnType<typeof supportDesk>;
const opened: McpClient[] = [];

beforeAll(async () => {
  h = await harness(`gateway-approval-${process.pid}`);
  issuer = await testIssuer();
  desk = supportDesk(testDir('gateway-approval'));
  gateway = await deskBehindGateway(h, {
    manifest,
    issuer,
    tools: desk.tools,
    ticketKey: TICKET_KEY,
    progressPollMs: 100,
  });
});

afterAll(async () => {
  for (const c of opened) await c.close();
  await gateway?.close();
  await h?.close();
});

async function session(): Promise<{ client: McpClient; workflowId: string }> {
  const client = await mcpClient(gateway.url, await gatewayToken(issuer, gateway.resource, 'agent:desk'));
  opened.push(client);
  // The refund's account comes from the ticket's text, not the CRM: its approval rule asks a person.
  const ticket = await client.callTool({ name: 'tickets__read_ticket', arguments: { ticket_id: 'T-101' } });
  expect(ticket.isError).toBeFalsy();
  return { client, workflowId: `toolplane-mcp/${sessionIdOf(client)}` };
}

const questioned = (key: string) => ({
  name: 'payments__refund',
  arguments: { account_id: 'acct_attacker_991', amount_cents: 1000, currency: 'EUR', memo: key },
  _meta: { idempotencyKey: key },
});

test('the call waits; an approver approves out of band; the repeated call gets the refund, sent once', async () => {
  const { client, workflowId } = await session();
  const waiting = await client.callTool(questioned('approve-then-repeat'));
  expect(waiting.isError).toBe(true);
  expect(waiting._meta?.['toolplane/status']).toBe('waiting');
  const effectKey = waiting._meta?.['toolplane/effectKey'] as string;
  expect((waiting.content as { text: string }[])[0]!.text).toContain(`toolplane approve ${workflowId} ${effectKey}`);
  expect(desk.payments.all().filter((p) => p.memo === 'approve-then-repeat')).toHaveLength(0);

  // The approver runs the command the client was told, with their own credential.
  const out: string[] = [];
  const code = await main(
    [
      'node',
      'toolplane',
      'approve',
      workflowId,
      effectKey,
      '--credential',
      await issuer.approverCredential('fin@corp.example', ['finance-approvers']),
      '--address',
      testAddress(),
    ],
    (l) => out.push(l),
    (l) => out.push(l),
  );
  expect({ code, out }).toEqual({ code: 0, out: [`${workflowId}: ${effectKey} approved by fin@corp.example`] });
  // The approved call goes on in the session's run, whether or not the client asks again.
  await waitFor('the approved refund to land', 30_000, () =>
    desk.payments.all().some((p) => p.memo === 'approve-then-repeat'),
  );
  const done = await waitFor('the repeated call to answer the approved refund', 15_000, async () => {
    const r = await client.callTool(questioned('approve-then-repeat'));
    return r._meta?.['toolplane/status'] === 'completed' ? r : undefined;
  });
  expect(done.structuredContent).toMatchObject({ status: 'refunded' });
  expect(desk.payments.all().filter((p) => p.memo === 'approve-then-repeat')).toHaveLength(1);
});

test('with a progressToken the request stays open and reports progress naming the effect key; the approved call lands in the run', async () => {
  const { client, workflowId } = await session();
  const approver = await issuer.approverCredential('fin@corp.example', ['finance-approvers']);
  const cancel = new AbortController();
  const progress: string[] = [];
  let approved: Promise<unknown> | undefined;
  const open = client.callTool(questioned('progress-then-cancel'), undefined, {
    onprogress: (p) => {
      progress.push(p.message ?? '');
      const effectKey = /effect key (\S+)\./.exec(p.message ?? '')?.[1];
      if (effectKey && !approved) approved = approve(h.client, workflowId, effectKey, { credential: approver });
    },
    signal: cancel.signal,
    timeout: 60_000,
  });
  const settled = open.then(
    () => 'answered',
    () => 'cancelled',
  );
  await waitFor('a progress notification while the call waits', 30_000, () => progress.length > 0);
  expect(progress[0]).toMatch(
    /^waiting for a person: .*effect key ek-\S+\. An approver .* decides with `toolplane approve toolplane-mcp\//,
  );
  await waitFor('the approved refund to land', 30_000, () =>
    desk.payments.all().some((p) => p.memo === 'progress-then-cancel'),
  );
  await approved;
  cancel.abort();
  await settled;
  expect(desk.payments.all().filter((p) => p.memo === 'progress-then-cancel')).toHaveLength(1);
});

test('with a progressToken the request stays open, reports progress, and returns the approved outcome', async () => {
  const { client, workflowId } = await session();
  const approver = await issuer.approverCredential('fin@corp.example', ['finance-approvers']);
  let approved: Promise<unknown> | undefined;
  const result = await client.callTool(questioned('approve-while-open'), undefined, {
    onprogress: (p) => {
      const effectKey = /effect key (\S+)\./.exec(p.message ?? '')?.[1];
      if (effectKey && !approved) approved = approve(h.client, workflowId, effectKey, { credential: approver });
    },
    timeout: 60_000,
  });
  await approved;
  expect(result._meta?.['toolplane/status']).toBe('completed');
  expect(desk.payments.all().filter((p) => p.memo === 'approve-while-open')).toHaveLength(1);
});

describe('as an MCP task (2025-11-25), with the SDK client', () => {
  test('the call is a working task while it waits; the approver approves; the task completes with the refund, sent once', async () => {
    const { client, workflowId } = await session();
    await client.listTools(); // the client learns which tools may run as tasks
    const approver = await issuer.approverCredential('fin@corp.example', ['finance-approvers']);
    const seen: string[] = [];
    let approved: Promise<unknown> | undefined;
    let result: { isError?: boolean; structuredContent?: unknown; _meta?: Record<string, unknown> } | undefined;
    const stream = client.experimental.tasks.callToolStream(questioned('task-approve'), undefined, {
      task: { ttl: 60_000 },
      timeout: 60_000,
    });
    for await (const message of stream) {
      if (message.type === 'taskCreated' || message.type === 'taskStatus') {
        seen.push(message.task.status);
        // The approver decides on the effect key the task's status names, out of band.
        const effectKey = /effect key (\S+)\./.exec(message.task.statusMessage ?? '')?.[1];
        if (effectKey && !approved) approved = approve(h.client, workflowId, effectKey, { credential: approver });
      } else if (message.type === 'result') result = message.result;
      else throw message.error;
    }
    await approved;
    expect(seen[0]).toBe('working');
    expect(seen.at(-1)).toBe('completed');
    expect(result).toMatchObject({ structuredContent: { status: 'refunded' } });
    expect(result?._meta?.['io.modelcontextprotocol/related-task']).toMatchObject({ taskId: expect.any(String) });
    expect(desk.payments.all().filter((p) => p.memo === 'task-approve')).toHaveLength(1);
  });

  test("a task id is the session's own: another session's client, or a changed id, gets a clear error and nothing runs", async () => {
    const { client } = await session();
    await client.listTools();
    const stream = client.experimental.tasks.callToolStream(questioned('task-foreign'), undefined, {
      task: {},
    });
    let taskId = '';
    for await (const message of stream) {
      if (message.type === 'taskCreated') {
        taskId = message.task.taskId;
        break;
      }
    }
    expect(taskId).not.toBe('');
    const other = await session();
    await expect(other.client.experimental.tasks.getTask(taskId)).rejects.toThrow(/no task of this session/);
    const changed = taskId.replace(/^./, (c) => (c === 'a' ? 'b' : 'a'));
    await expect(client.experimental.tasks.getTask(changed)).rejects.toThrow(/no task of this session/);
    expect(desk.payments.all().filter((p) => p.memo === 'task-foreign')).toHaveLength(0);
  });
});
