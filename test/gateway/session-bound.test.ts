// Issue 46.4: each session's run spends its pass (a spend record open until the pass expires), so a
// bearer holder opening sessions without end would open records without end. The gateway bounds the
// sessions open per principal: at the bound a new session is refused, typed, and starts no run; another
// principal is not affected, and a session that ended frees its place.
import { randomBytes, randomUUID } from 'node:crypto';
import path from 'node:path';
import { mcpSessionWorkflowId } from '../../common/gateway-protocol';
import type { RunIdentity } from '../../common/ticket';
import { SessionClient } from '../../gateway/session-client';
import { loadManifest } from '../../runtime/manifest-file';
import { supportDesk } from '../support/desk';
import { EXAMPLE_MANIFEST, harness, testDir, type Harness } from '../support/env';
import { testIssuer } from '../support/identity';
import { waitFor } from '../support/wait';

const LOOKUP = 'tool://crm/lookup_customer';
const DESK: RunIdentity = { principal: 'desk@corp.example', groups: [], issuer: 'https://issuer.test' };
const OTHER: RunIdentity = { principal: 'other@corp.example', groups: [], issuer: 'https://issuer.test' };
const IDENTITY_MANIFEST = path.join(path.dirname(EXAMPLE_MANIFEST), 'manifest.identity.yaml');

describe('open sessions per principal (issue 46.4)', () => {
  const ticketKey = randomBytes(32).toString('base64url');
  let h: Harness;

  beforeAll(async () => {
    const issuer = await testIssuer();
    h = await harness(`mcp-bound-${randomUUID()}`);
    const desk = supportDesk(testDir('mcp-bound'));
    const manifest = loadManifest(IDENTITY_MANIFEST).manifest;
    // The manifest declares no principals: every verified principal may look customers up.
    await h.runWorker({
      manifest,
      tools: desk.tools,
      identity: issuer.identity,
      insecureAssertedPrincipals: false,
      ticketKey,
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  const lookup = (sessions: SessionClient, sid: string, who: RunIdentity) =>
    sessions.call(sid, who, { key: 'k:1', toolId: LOOKUP, args: { email: 'alice@example.com' } });
  const openOf = async (who: RunIdentity) =>
    (
      await h.client.workflow.count(
        `WorkflowType = 'mcpSession' AND ExecutionStatus = 'Running' AND TaskQueue = '${h.taskQueue}' AND ToolplanePrincipal = '${who.principal}'`,
      )
    ).count;

  it('at the bound a new session is refused, typed, and starts no run; an ended one frees its place', async () => {
    const sessions = new SessionClient({
      client: h.client,
      taskQueue: h.taskQueue,
      ticketKey,
      maxOpenSessionsPerPrincipal: 2,
    });
    const first = sessions.newSessionId(DESK);
    const second = sessions.newSessionId(DESK);
    expect(await lookup(sessions, first, DESK)).toMatchObject({ status: 'completed' });
    expect(await lookup(sessions, second, DESK)).toMatchObject({ status: 'completed' });
    await waitFor('both sessions to be listed open', 30_000, async () =>
      (await openOf(DESK)) === 2 ? true : undefined,
    );
    // A call in a session already open is served at the bound.
    expect(
      await sessions.call(first, DESK, { key: 'k:2', toolId: LOOKUP, args: { email: 'bob@example.com' } }),
    ).toMatchObject({ status: 'completed' });

    const third = sessions.newSessionId(DESK);
    await expect(lookup(sessions, third, DESK)).rejects.toMatchObject({
      code: 'SessionLimit',
      data: { principal: DESK.principal, limit: 2 },
    });
    await expect(h.client.workflow.getHandle(mcpSessionWorkflowId(third)).describe()).rejects.toThrow(/not found/i);

    // Another principal has places of its own.
    expect(await lookup(sessions, sessions.newSessionId(OTHER), OTHER)).toMatchObject({ status: 'completed' });

    await sessions.end(first);
    await waitFor('the ended session to leave the open ones', 30_000, async () =>
      (await openOf(DESK)) === 1 ? true : undefined,
    );
    expect(await lookup(sessions, third, DESK)).toMatchObject({ status: 'completed' });
  });
});
