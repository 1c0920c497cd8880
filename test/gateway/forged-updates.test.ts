// Issue 46.3: someone with namespace access (a plain Temporal connection) but not the gateway's key
// sends a session's run a call or an end. The run's validator refuses it before it enters history: it
// takes no position in the journal, `toolplane show` does not list it, nobody is asked to approve it,
// and an old signature read from history does not carry other arguments. The gateway's own calls serve
// on, across a worker restart after the refusals.
import { randomBytes, randomUUID } from 'node:crypto';
import path from 'node:path';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure, defaultPayloadConverter } from '@temporalio/common';
import { buildProgram } from '../../cli';
import { pendingDecisions, readJournal } from '../../client';
import { mcpCallUpdate, mcpSessionWorkflowId, type McpCallOutcome } from '../../common/gateway-protocol';
import type { RunIdentity } from '../../common/ticket';
import { SessionClient } from '../../gateway/session-client';
import { loadManifest } from '../../runtime/manifest-file';
import { supportDesk } from '../support/desk';
import { EXAMPLE_MANIFEST, harness, testDir, type Harness } from '../support/env';
import { historyOf } from '../support/history';
import { testIssuer } from '../support/identity';

const LOOKUP = 'tool://crm/lookup_customer';
const REFUND = 'tool://payments/refund';
const DESK: RunIdentity = { principal: 'desk@corp.example', groups: [], issuer: 'https://issuer.test' };
const IDENTITY_MANIFEST = path.join(path.dirname(EXAMPLE_MANIFEST), 'manifest.identity.yaml');
/** The type of the failure a session's validator refuses a message with. */
const REFUSED = 'McpSessionMessageRefused';

/** The call requests a run's history holds (accepted updates only), as they were sent. */
async function acceptedCalls(h: Harness, workflowId: string): Promise<Record<string, unknown>[]> {
  return (await historyOf(h.client, workflowId))
    .map((e) => e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest)
    .filter((r) => r?.input?.name === mcpCallUpdate.name)
    .map((r) => defaultPayloadConverter.fromPayload<Record<string, unknown>>(r!.input!.args!.payloads![0]!));
}

async function expectRefusedBeforeHistory(sent: Promise<unknown>, reason: RegExp): Promise<void> {
  const err = await sent.then(
    (answer) => new Error(`the session took the message and answered ${JSON.stringify(answer)}`),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(WorkflowUpdateFailedError);
  const cause = (err as WorkflowUpdateFailedError).cause;
  expect(cause).toBeInstanceOf(ApplicationFailure);
  expect((cause as ApplicationFailure).type).toBe(REFUSED);
  expect(JSON.stringify((cause as ApplicationFailure).details)).toMatch(reason);
}

describe('forged session updates (issue 46.3)', () => {
  const ticketKey = randomBytes(32).toString('base64url');
  let h: Harness;
  let desk: ReturnType<typeof supportDesk>;
  let sessions: SessionClient;
  let stopWorker: () => Promise<void>;

  async function startWorker(identity: Awaited<ReturnType<typeof testIssuer>>['identity']): Promise<void> {
    const w = await h.startWorker({
      manifest: loadManifest(IDENTITY_MANIFEST).manifest,
      tools: desk.tools,
      identity,
      insecureAssertedPrincipals: false,
      ticketKey,
    });
    const done = w.run();
    stopWorker = async () => {
      w.shutdown();
      await done;
    };
  }

  let identity: Awaited<ReturnType<typeof testIssuer>>['identity'];
  beforeAll(async () => {
    identity = (await testIssuer()).identity;
    h = await harness(`mcp-forged-${randomUUID()}`);
    desk = supportDesk(testDir('mcp-forged'));
    await startWorker(identity);
    sessions = new SessionClient({ client: h.client, taskQueue: h.taskQueue, ticketKey });
  });
  afterAll(async () => {
    await stopWorker?.();
    await h?.close();
  });

  const alice = { account_id: 'acct_alice_001', amount_cents: 2500, currency: 'EUR' };
  const completed = (o: McpCallOutcome) => {
    if (o.status !== 'completed') throw new Error(`expected completed, got ${JSON.stringify(o)}`);
    return o;
  };
  const cli = async (...args: string[]): Promise<unknown> => {
    const lines: string[] = [];
    process.env.TEMPORAL_ADDRESS = process.env.TOOLPLANE_TEST_ADDRESS;
    try {
      await buildProgram((l) => lines.push(l)).parseAsync(['node', 'toolplane', ...args, '--json']);
    } finally {
      delete process.env.TEMPORAL_ADDRESS;
    }
    return JSON.parse(lines.join('\n'));
  };

  it("a call without the gateway's proof, or with a made-up one, never enters history and asks nobody", async () => {
    const sid = sessions.newSessionId(DESK);
    const workflowId = mcpSessionWorkflowId(sid);
    completed(await sessions.call(sid, DESK, { key: 'k:1', toolId: LOOKUP, args: { email: 'alice@example.com' } }));
    const handle = h.client.workflow.getHandle(workflowId);
    // A refund the gate would ask an approver about (its amount is of unknown origin): forged, it asks nobody.
    await expectRefusedBeforeHistory(
      handle.executeUpdate(mcpCallUpdate, {
        args: [{ key: 'k:forged', toolId: REFUND, args: alice, mac: 'AAAAAAAAAAAAAAAAAAAAAA' }],
      }),
      /bad_proof|malformed/,
    );
    await expectRefusedBeforeHistory(
      handle.executeUpdate('toolplane.mcp.call', { args: [{ key: 'k:bare', toolId: REFUND, args: alice }] }),
      /malformed/,
    );
    const keys = (await acceptedCalls(h, workflowId)).map((r) => r.key);
    expect(keys).toEqual(['k:1']);
    expect(await pendingDecisions(h.client, workflowId)).toEqual([]);
    const { effects } = await readJournal(h.client, workflowId);
    expect(effects.map((e) => e.toolId)).toEqual([LOOKUP]);
    const shown = (await cli('show', workflowId)) as { effects: { toolId: string }[] };
    expect(shown.effects.map((e) => e.toolId)).toEqual([LOOKUP]);
    expect(desk.payments.all().filter((p) => p.account === 'acct_alice_001')).toHaveLength(0);

    // The gateway's own refund, after the refusals and a worker restart, waits for an approver as it should.
    await stopWorker();
    await startWorker(identity);
    const waiting = await sessions.call(sid, DESK, { key: 'k:2', toolId: REFUND, args: alice });
    expect(waiting).toMatchObject({ status: 'waiting' });
    expect((await pendingDecisions(h.client, workflowId)).map((p) => p.toolId)).toEqual([REFUND]);
    await sessions.end(sid);
  });

  it("the gateway's proof read from history does not carry other arguments, another key or another tool", async () => {
    const sid = sessions.newSessionId(DESK);
    const workflowId = mcpSessionWorkflowId(sid);
    completed(await sessions.call(sid, DESK, { key: 'k:1', toolId: LOOKUP, args: { email: 'alice@example.com' } }));
    const [genuine] = await acceptedCalls(h, workflowId);
    const handle = h.client.workflow.getHandle(workflowId);
    const resend = (changes: Record<string, unknown>) =>
      handle.executeUpdate('toolplane.mcp.call', { args: [{ ...genuine, ...changes }] });
    await expectRefusedBeforeHistory(resend({ args: { email: 'mallory@example.com' } }), /bad_proof/);
    await expectRefusedBeforeHistory(resend({ key: 'k:9', args: { email: 'mallory@example.com' } }), /bad_proof/);
    await expectRefusedBeforeHistory(resend({ key: 'k:10', toolId: REFUND, args: alice }), /bad_proof/);
    expect((await acceptedCalls(h, workflowId)).map((r) => r.key)).toEqual(['k:1']);
    expect(await pendingDecisions(h.client, workflowId)).toEqual([]);
    expect((await readJournal(h.client, workflowId)).effects.map((e) => e.toolId)).toEqual([LOOKUP]);
    await sessions.end(sid);
  });

  it("an end the gateway did not sign is refused; the session serves on and the gateway's end ends it", async () => {
    const sid = sessions.newSessionId(DESK);
    const workflowId = mcpSessionWorkflowId(sid);
    completed(await sessions.call(sid, DESK, { key: 'k:1', toolId: LOOKUP, args: { email: 'bob@example.com' } }));
    const handle = h.client.workflow.getHandle(workflowId);
    await expectRefusedBeforeHistory(handle.executeUpdate('toolplane.mcp.end'), /malformed/);
    await expectRefusedBeforeHistory(
      handle.executeUpdate('toolplane.mcp.end', { args: [{ issuedAt: Date.now(), sig: 'A'.repeat(86) }] }),
      /bad_proof/,
    );
    completed(await sessions.call(sid, DESK, { key: 'k:2', toolId: LOOKUP, args: { email: 'alice@example.com' } }));
    await sessions.end(sid);
    expect(await handle.result()).toMatchObject({ status: 'ended' });
  });
});
