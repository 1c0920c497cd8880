// The MCP gateway's sessions on a real server (issue 32, the worker side): each call through
// SessionClient is one governed call in the session's run, exactly once per key, gated over what the
// session returned, approved out of band, and only the gateway (holding the ticket key) can call or start.
import { randomBytes, randomUUID } from 'node:crypto';
import path from 'node:path';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import type { Manifest, ToolDecl } from '../../catalog/manifest';
import { ErrorCode } from '../../catalog/error-codes';
import { approve } from '../../client';
import {
  MCP_SESSION_WORKFLOW,
  mcpCallUpdate,
  mcpSessionWorkflowId,
  type McpCallOutcome,
  type McpSessionInput,
} from '../../common/gateway-protocol';
import type { RunIdentity } from '../../common/ticket';
import { issueSessionPass } from '../../activities/identity/session-pass';
import { SessionClient, SessionEnded } from '../../gateway/session-client';
import { loadManifest } from '../../runtime/manifest-file';
import type { McpSessionResult } from '../../workflows/mcp/session';
import { supportDesk } from '../support/desk';
import { EXAMPLE_MANIFEST, harness, testDir, type Harness } from '../support/env';
import { testIssuer, type TestIssuer } from '../support/identity';
import { waitFor } from '../support/wait';

const LOOKUP = 'tool://crm/lookup_customer';
const READ_TICKET = 'tool://tickets/read_ticket';
const REFUND = 'tool://payments/refund';
const SEND = 'tool://mail/send_email';
const CLOSE = 'tool://tickets/close_ticket';
const DESK: RunIdentity = { principal: 'desk@corp.example', groups: [], issuer: 'https://issuer.test' };
const IDENTITY_MANIFEST = path.join(path.dirname(EXAMPLE_MANIFEST), 'manifest.identity.yaml');

/** The identity manifest; with `refuse`, a refund the gate questions is refused instead of asking a person. */
function manifestOf(refuse: boolean): Manifest {
  const m = loadManifest(IDENTITY_MANIFEST).manifest;
  if (!refuse) return m;
  const tools = m.tools.map((t): ToolDecl => {
    if (t.id !== REFUND) return t;
    const { approval: _approval, ...rest } = t;
    return rest as ToolDecl;
  });
  return { ...m, tools };
}

interface Desk {
  h: Harness;
  desk: ReturnType<typeof supportDesk>;
  sessions: SessionClient;
  /** Stops the worker and starts a new one. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

describe('MCP gateway sessions (mcpSession)', () => {
  const ticketKey = randomBytes(32).toString('base64url');
  let issuer: TestIssuer;
  let gated: Desk;
  let approving: Desk;

  async function serve(name: string, manifest: Manifest): Promise<Desk> {
    const h = await harness(`mcp-${name}-${randomUUID()}`);
    const desk = supportDesk(testDir(`mcp-${name}`));
    const start = async () => {
      const w = await h.startWorker({
        manifest,
        tools: desk.tools,
        identity: issuer.identity,
        insecureAssertedPrincipals: false,
        ticketKey,
      });
      const done = w.run();
      return async () => {
        w.shutdown();
        await done;
      };
    };
    let stopWorker = await start();
    const sessions = new SessionClient({ client: h.client, taskQueue: h.taskQueue, ticketKey });
    return {
      h,
      desk,
      sessions,
      async restart() {
        await stopWorker();
        stopWorker = await start();
      },
      async close() {
        await stopWorker();
        await h.close();
      },
    };
  }

  beforeAll(async () => {
    issuer = await testIssuer();
    gated = await serve('gated', manifestOf(true));
    approving = await serve('approving', manifestOf(false));
  });
  afterAll(async () => {
    for (const d of [gated, approving]) await d?.close();
  });

  const alice = { account_id: 'acct_alice_001', amount_cents: 2500, currency: 'EUR' };
  const landedFor = (d: Desk, account: string) => d.desk.payments.all().filter((p) => p.account === account);
  const completed = (o: McpCallOutcome) => {
    if (o.status !== 'completed') throw new Error(`expected completed, got ${JSON.stringify(o)}`);
    return o;
  };

  it("an update the gateway did not make (a bad call MAC) performs nothing; the gateway's own call does", async () => {
    const { sessions, h, desk } = gated;
    const sid = sessions.newSessionId(DESK);
    const close = { ticket_id: 'T-100', resolution: 'Refunded the duplicate charge.' };
    const closedT100 = () => desk.closed.all().filter((c) => c.ticket_id === 'T-100');
    // The session's run, started as the gateway starts it, before any call: what the client sends is the principal's.
    const workflowId = mcpSessionWorkflowId(sid);
    const pass = issueSessionPass(Buffer.from(ticketKey, 'base64url'), workflowId, DESK, 60_000);
    const handle = await h.client.workflow.start(MCP_SESSION_WORKFLOW, {
      taskQueue: h.taskQueue,
      workflowId,
      args: [{ pass } satisfies McpSessionInput],
    });
    // Its validator refuses it before it enters history (test/gateway/forged-updates.test.ts has the rest).
    await expect(
      handle.executeUpdate(mcpCallUpdate, {
        args: [{ key: 'k:forged', toolId: CLOSE, args: close, mac: 'AAAAAAAAAAAAAAAAAAAAAA' }],
      }),
    ).rejects.toThrow(/Update failed|signature/);
    expect(closedT100()).toHaveLength(0);
    // The same call as the gateway makes it (its MAC for this session, key and tool) lands.
    completed(await sessions.call(sid, DESK, { key: 'k:2', toolId: CLOSE, args: close }));
    expect(closedT100()).toHaveLength(1);
    await sessions.end(sid);
  });

  it("a refund to an account first seen in a ticket's text is refused with the protected-field rule", async () => {
    const { sessions } = gated;
    const sid = sessions.newSessionId(DESK);
    completed(await sessions.call(sid, DESK, { key: 'k:1', toolId: READ_TICKET, args: { ticket_id: 'T-101' } }));
    const refund = { account_id: 'acct_attacker_991', amount_cents: 95000, currency: 'EUR' };
    const refused = await sessions.call(sid, DESK, { key: 'k:2', toolId: REFUND, args: refund });
    expect(refused).toMatchObject({ status: 'refused', rule: expect.stringMatching(/^protected_field/) });
    expect(landedFor(gated, 'acct_attacker_991')).toHaveLength(0);
    await sessions.end(sid);
  });

  it("an address the client sends before any result is the principal's own words; after a result it is of unknown origin", async () => {
    const { sessions, desk } = gated;
    const sid = sessions.newSessionId(DESK);
    const mail = (to: string) => ({ to, subject: 'Your refund', body: 'Done.' });
    completed(await sessions.call(sid, DESK, { key: 'k:1', toolId: SEND, args: mail('carol@example.org') }));
    const later = await sessions.call(sid, DESK, { key: 'k:2', toolId: SEND, args: mail('dave@example.org') });
    expect(later).toMatchObject({ status: 'refused', rule: expect.stringMatching(/^protected_field/) });
    const sent = desk.outbox.all().map((m) => m.to);
    expect(sent).toContain('carol@example.org');
    expect(sent).not.toContain('dave@example.org');
    await sessions.end(sid);
  });

  it('a refund needing approval waits; a declared approver approves; the call lands once under repeats and a worker restart; other args are KeyReused', async () => {
    const { sessions, h } = approving;
    const sid = sessions.newSessionId(DESK);
    const call = (args: unknown) => sessions.call(sid, DESK, { key: 'k:2', toolId: REFUND, args });
    completed(await sessions.call(sid, DESK, { key: 'k:1', toolId: LOOKUP, args: { email: 'alice@example.com' } }));
    // The amount was not in the session before the CRM's result: of unknown origin, so the refund asks a person.
    const waiting = await call(alice);
    if (waiting.status !== 'waiting') throw new Error(`expected waiting, got ${JSON.stringify(waiting)}`);
    expect(waiting.approvers).toMatch(/approver/);
    expect(await call(alice)).toEqual(waiting);
    expect(landedFor(approving, 'acct_alice_001')).toHaveLength(0);
    const cfo = await issuer.approverCredential('cfo@corp.example');
    await approve(h.client, mcpSessionWorkflowId(sid), waiting.effectKey, { credential: cfo });
    const outcome = completed(
      await waitFor('the approved refund to settle', 60_000, async () => {
        const o = await call(alice);
        return o.status === 'waiting' ? undefined : o;
      }),
    );
    expect(outcome.effectKey).toBe(waiting.effectKey);
    expect(await call(alice)).toEqual(outcome);
    await approving.restart();
    expect(await call(alice)).toEqual(outcome);
    expect(await call({ ...alice, amount_cents: 2600 })).toMatchObject({
      status: 'refused',
      code: ErrorCode.KeyReused,
    });
    expect(landedFor(approving, 'acct_alice_001')).toHaveLength(1);
    await sessions.end(sid);
  });

  it("a pass read from an ended session's history cannot start the session again; an ended session throws SessionEnded", async () => {
    const { sessions, h } = gated;
    const sid = sessions.newSessionId(DESK);
    completed(await sessions.call(sid, DESK, { key: 'k:1', toolId: LOOKUP, args: { email: 'bob@example.com' } }));
    await sessions.end(sid);
    const handle = h.client.workflow.getHandle<(i: McpSessionInput) => Promise<McpSessionResult>>(
      mcpSessionWorkflowId(sid),
    );
    expect(await handle.result()).toMatchObject({ status: 'ended' });
    await expect(
      sessions.call(sid, DESK, { key: 'k:2', toolId: LOOKUP, args: { email: 'bob@example.com' } }),
    ).rejects.toBeInstanceOf(SessionEnded);
    const [input] = (await handle.fetchHistory()).events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads!;
    const pass = (JSON.parse(Buffer.from(input!.data!).toString()) as McpSessionInput).pass!;
    const again = await h.client.workflow.start(MCP_SESSION_WORKFLOW, {
      taskQueue: h.taskQueue,
      workflowId: mcpSessionWorkflowId(sid),
      workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      args: [{ pass }],
    });
    await expectRefused(again, /already used/);
  });

  it("another principal's session id is not theirs, and a pass for another session starts nothing", async () => {
    const { sessions, h } = gated;
    const other: RunIdentity = { principal: 'mallory@corp.example', groups: [] };
    const sid = sessions.newSessionId(DESK);
    expect(sessions.owns(sid, DESK)).toBe(true);
    expect(sessions.owns(sid, other)).toBe(false);
    const key = Buffer.from(ticketKey, 'base64url');
    const elsewhere = issueSessionPass(key, mcpSessionWorkflowId('elsewhere'), other, 60_000);
    const started = await h.client.workflow.start(MCP_SESSION_WORKFLOW, {
      taskQueue: h.taskQueue,
      workflowId: mcpSessionWorkflowId(sessions.newSessionId(other)),
      args: [{ pass: elsewhere }],
    });
    await expectRefused(started, /not issued/);
  });

  it('a session without calls for its idle timeout ends', async () => {
    const { h } = gated;
    const sessions = new SessionClient({ client: h.client, taskQueue: h.taskQueue, ticketKey, idleTimeoutMs: 1500 });
    const sid = sessions.newSessionId(DESK);
    completed(await sessions.call(sid, DESK, { key: 'k:1', toolId: LOOKUP, args: { email: 'bob@example.com' } }));
    const handle = h.client.workflow.getHandle(mcpSessionWorkflowId(sid));
    expect(await handle.result()).toMatchObject({ status: 'idle' });
    await expect(
      sessions.call(sid, DESK, { key: 'k:2', toolId: LOOKUP, args: { email: 'bob@example.com' } }),
    ).rejects.toBeInstanceOf(SessionEnded);
  });

  it('continue-as-new keeps the call memo and the provenance', async () => {
    const { sessions, h, desk } = gated;
    const sid = sessions.newSessionId(DESK);
    const workflowId = mcpSessionWorkflowId(sid);
    const pass = issueSessionPass(Buffer.from(ticketKey, 'base64url'), workflowId, DESK, 60_000);
    const first = await h.client.workflow.start(MCP_SESSION_WORKFLOW, {
      taskQueue: h.taskQueue,
      workflowId,
      args: [{ pass, continueAsNewAfterCalls: 2 } satisfies McpSessionInput],
    });
    const mail = (to: string, subject: string) => ({ to, subject, body: 'About your refund.' });
    const toAlice = () => desk.outbox.all().filter((m) => m.to === 'alice@example.com');
    completed(await sessions.call(sid, DESK, { key: 'k:1', toolId: LOOKUP, args: { email: 'alice@example.com' } }));
    const sent = completed(
      await sessions.call(sid, DESK, { key: 'k:2', toolId: SEND, args: mail('alice@example.com', 'Refund') }),
    );
    await waitFor('the session to continue as new', 60_000, async () =>
      (await h.client.workflow.getHandle(workflowId).describe()).runId !== first.firstExecutionRunId ? true : undefined,
    );
    // The memo: the repeat answers the first run's outcome, and sends nothing.
    expect(
      await sessions.call(sid, DESK, { key: 'k:2', toolId: SEND, args: mail('alice@example.com', 'Refund') }),
    ).toEqual(sent);
    // The provenance: the CRM's address still satisfies the recipient; an address of unknown origin still does not.
    completed(await sessions.call(sid, DESK, { key: 'k:3', toolId: SEND, args: mail('alice@example.com', 'Again') }));
    const stranger = await sessions.call(sid, DESK, { key: 'k:4', toolId: SEND, args: mail('eve@example.org', 'Hi') });
    expect(stranger).toMatchObject({ status: 'refused', rule: expect.stringMatching(/^protected_field/) });
    expect(toAlice()).toHaveLength(2);
    await sessions.end(sid);
  });
});

async function expectRefused(handle: WorkflowHandle, message: RegExp): Promise<void> {
  const err: unknown = await handle.result().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(WorkflowFailedError);
  const cause = (err as WorkflowFailedError).cause;
  expect(cause?.message).toMatch(message);
  expect((cause as { type?: string }).type).toBe(ErrorCode.IdentityRefused);
}
