// Who acts: the worker verifies a run's credential, issues it a ticket, and every toolplane activity
// checks that ticket against the run that scheduled it. Each attack of the identity issue is tried
// here from outside, as a client that only reaches the namespace, next to its benign control.
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { defaultPayloadConverter } from '@temporalio/common';
import { Worker } from '@temporalio/worker';
import { decodeJwt } from 'jose';
import type { Manifest } from '../../catalog/manifest';
import { PRINCIPAL } from '../../common/search-attributes';
import { CredentialVerifier } from '../../identity/credentials';
import { generateIssuerKey, signCredential } from '../../identity/mint';
import {
  createTools as memoryTools,
  factStore,
  MY_IBAN,
  ATTACKER_IBAN,
  paymentStore,
} from '../../examples/memory/tools';
import { loadManifest } from '../../runtime/manifest-file';
import type { AgentRunInput } from '../../workflows/agent/run';
import { agentInput, type Script } from '../support/agent';
import { refundScript, supportDesk } from '../support/desk';
import { exampleManifest, harness, testDir, type Harness } from '../support/env';
import { historyOf, openingOf, scheduledActivities } from '../support/history';
import { testIssuer, TEST_AUDIENCE, type TestIssuer } from '../support/identity';
import { payNoted, rememberIban } from './scenarios-identity';
import { generateLedgerKey } from '../../ledger/keys';

const REFUND = 'tool://payments/refund';
const ATTACKER_REFUND = { account_id: 'acct_attacker_991', amount_cents: 95000, currency: 'EUR' };

/** The attacker's own script: a refund to its account, run as whoever the stolen credential names. */
const attackerScript: Script = {
  prompt: 'Refund the customer.',
  turns: [{ tool_calls: [{ name: 'payments__refund', arguments: ATTACKER_REFUND }] }, { final: 'done' }],
};

/** Starts an agent run as the test's client does: a workflow id, and a credential bound to it when given. */
async function run(
  h: Harness,
  manifest: Manifest,
  script: Script,
  as: { credential?: (workflowId: string) => Promise<string> } & Omit<Partial<AgentRunInput>, 'credential'>,
) {
  const workflowId = `agent-${randomUUID()}`;
  const { credential, ...extra } = as;
  const token = credential ? await credential(workflowId) : undefined;
  // The run names the principal its credential is for (a worker that verifies takes the token's subject).
  const input = agentInput(manifest, script, {
    principal: token ? decodeJwt(token).sub : undefined,
    ...extra,
    ...(token ? { credential: token } : {}),
  });
  const handle = await h.client.workflow.start('agentRun', { taskQueue: h.taskQueue, workflowId, args: [input] });
  return { workflowId, handle, input };
}

/** A worker of the rogue client's own, on a queue of its own, running test/fixtures/rogue/workflows.ts. */
async function rogueWorker(h: Harness): Promise<{ taskQueue: string; stop(): Promise<void> }> {
  const taskQueue = `rogue-${randomUUID()}`;
  const worker = await Worker.create({
    connection: h.native,
    taskQueue,
    workflowsPath: require.resolve('../fixtures/rogue/workflows'),
    activities: { forgedOpening: (answer: unknown) => Promise.resolve(answer) },
  });
  const running = worker.run();
  return {
    taskQueue,
    async stop() {
      worker.shutdown();
      await running;
    },
  };
}

describe('identity: the worker knows who asks', () => {
  const dir = testDir('identity');
  const desk = supportDesk(dir);
  let issuer: TestIssuer;
  let h: Harness;
  let rogue: { taskQueue: string; stop(): Promise<void> };
  // Only the desk agent (by subject) or a member of finance-desk (by group) may be granted the refund.
  const manifest: Manifest = {
    ...exampleManifest(),
    principals: {
      'agent:desk': { tools: '*', capabilities: [], models: '*', share_facts_with: [] },
      'group:finance-desk': { tools: '*', capabilities: [], models: '*', share_facts_with: [] },
      '*': {
        tools: ['tool://crm/lookup_customer', 'tool://tickets/read_ticket'],
        capabilities: [],
        models: '*',
        share_facts_with: [],
      },
    },
  };
  const attackerRefunds = () => desk.payments.all().filter((p) => p.account === ATTACKER_REFUND.account_id);

  beforeAll(async () => {
    issuer = await testIssuer();
    h = await harness(`identity-${randomUUID()}`);
    await h.runWorker({
      manifest,
      tools: desk.tools,
      identity: issuer.identity,
      insecureAssertedPrincipals: false,
      allowUngovernedToolRun: true,
    });
    rogue = await rogueWorker(h);
  });
  afterAll(async () => {
    await rogue?.stop();
    await h?.close();
  });

  describe('attack 1: any principal, by name', () => {
    it('refuses a run that names agent:desk but carries no credential, before any model turn or call', async () => {
      const { handle, workflowId } = await run(h, manifest, refundScript, { principal: 'agent:desk' });
      await expect(handle.result()).rejects.toMatchObject({
        cause: { type: 'IdentityRefused', message: expect.stringContaining('carries no credential') },
      });
      expect(scheduledActivities(await historyOf(h.client, workflowId))).toEqual([]);
      // Listed as what it is: an unverified claim, never as agent:desk.
      const sa = (await handle.describe()).typedSearchAttributes;
      expect(sa.get(PRINCIPAL)).toBe('unverified:agent:desk');
    });

    it("refuses the intruder's credential asking to act as agent:desk", async () => {
      const { handle } = await run(h, manifest, refundScript, {
        principal: 'agent:desk',
        credential: (wf) => issuer.runCredential('agent:intruder', wf),
      });
      await expect(handle.result()).rejects.toMatchObject({
        cause: { type: 'IdentityRefused', message: expect.stringContaining("agent:intruder's") },
      });
    });

    it('the intruder acting as itself is refused the refund; agent:desk with its own credential gets it', async () => {
      const intruder = await run(h, manifest, refundScript, {
        credential: (wf) => issuer.runCredential('agent:intruder', wf),
      });
      const refused = await intruder.handle.result();
      expect(refused.journal.map((e: { outcome?: string; rule?: string }) => [e.outcome, e.rule])).toEqual([
        ['ok', undefined],
        ['refused', 'unreachable'],
      ]);
      const before = desk.payments.all().length;
      const desked = await run(h, manifest, refundScript, {
        credential: (wf) => issuer.runCredential('agent:desk', wf),
      });
      expect((await desked.handle.result()).journal.map((e: { outcome?: string; rule?: string }) => e.outcome)).toEqual(
        ['ok', 'ok'],
      );
      expect(desk.payments.all().length).toBe(before + 1);
      // The run labels itself with the verified subject.
      expect((await desked.handle.describe()).typedSearchAttributes.get(PRINCIPAL)).toBe('agent:desk');
    });

    it('grants through a verified group claim', async () => {
      const r = await run(h, manifest, refundScript, {
        credential: (wf) => issuer.runCredential('alice@corp.example', wf, ['finance-desk']),
      });
      expect((await r.handle.result()).journal.map((e: { outcome?: string; rule?: string }) => e.outcome)).toEqual([
        'ok',
        'ok',
      ]);
    });

    it("a credential read from one run's history cannot start another", async () => {
      const first = await run(h, manifest, refundScript, {
        credential: (wf) => issuer.runCredential('agent:desk', wf),
      });
      await first.handle.result();
      const stolen = first.input.credential!;
      const replayed = await run(h, manifest, refundScript, { credential: () => Promise.resolve(stolen) });
      await expect(replayed.handle.result()).rejects.toMatchObject({
        cause: { type: 'IdentityRefused', message: expect.stringContaining(`bound to workflow "${first.workflowId}"`) },
      });
    });

    it("a credential read from a closed run's history cannot start a new run under the same workflow id", async () => {
      const first = await run(h, manifest, refundScript, {
        credential: (wf) => issuer.runCredential('agent:desk', wf),
      });
      await first.handle.result();
      const before = desk.payments.all().length;
      // Temporal frees a closed run's workflow id; the attacker starts its own run there with the stolen token.
      const stolen = agentInput(manifest, attackerScript, {
        principal: 'agent:desk',
        credential: first.input.credential!,
      });
      const replayed = await h.client.workflow.start('agentRun', {
        taskQueue: h.taskQueue,
        workflowId: first.workflowId,
        args: [stolen],
      });
      await expect(replayed.result()).rejects.toMatchObject({
        cause: { type: 'IdentityRefused', message: expect.stringContaining('already used') },
      });
      expect(scheduledActivities(await historyOf(h.client, first.workflowId))).toEqual([]);
      expect(desk.payments.all().length).toBe(before);
      expect(attackerRefunds()).toEqual([]);
    });

    it('a token from an issuer the worker does not trust, or for another audience, is refused', async () => {
      const stranger = await generateIssuerKey('https://stranger.example', 's-1');
      const foreign = await run(h, manifest, refundScript, {
        credential: (wf) =>
          signCredential(stranger, { audience: TEST_AUDIENCE, subject: 'agent:desk', workflowId: wf }),
      });
      await expect(foreign.handle.result()).rejects.toMatchObject({ cause: { type: 'IdentityRefused' } });
      const elsewhere = await run(h, manifest, refundScript, {
        credential: (wf) =>
          signCredential(issuer.key, { audience: 'another-service', subject: 'agent:desk', workflowId: wf }),
      });
      await expect(elsewhere.handle.result()).rejects.toMatchObject({
        cause: { type: 'IdentityRefused', message: expect.stringContaining('audience') },
      });
    });
  });

  describe('attack 4 and R1/R2: requests from a workflow that is no run the worker authorized', () => {
    it('refuses performTool scheduled by another workflow with a forged decision; nothing lands, nothing is signed', async () => {
      const workflowId = `rogue-${randomUUID()}`;
      const attempt = h.client.workflow.execute('rogueActivity', {
        taskQueue: rogue.taskQueue,
        workflowId,
        args: [
          h.taskQueue,
          'performTool',
          { toolId: REFUND, args: ATTACKER_REFUND, principal: 'agent:desk', decision: 'allowed', trustedArgs: true },
        ],
      });
      await expect(attempt).rejects.toMatchObject({
        cause: { cause: { type: 'ToolUnavailable', message: expect.stringContaining('no ticket this worker issued') } },
      });
      expect(attackerRefunds()).toEqual([]);
    });

    it("refuses a ticket copied from a real run's history", async () => {
      const real = await run(h, manifest, refundScript, { credential: (wf) => issuer.runCredential('agent:desk', wf) });
      await real.handle.result();
      const opening = await openingOf(h, real.workflowId);
      const copied = opening.ticket.permits[`tool:${REFUND}`];
      expect(copied).toMatch(/^[A-Za-z0-9_-]{22}$/);
      // The run's calls carry no MAC: the worker read it from the run's opening.
      const performs = scheduledActivities(await historyOf(h.client, real.workflowId)).filter(
        (a) => a.type === 'performTool',
      );
      expect(performs.length).toBeGreaterThan(0);
      for (const p of performs) expect(p.input).not.toHaveProperty('ticket');
      const attempt = h.client.workflow.execute('rogueActivity', {
        taskQueue: rogue.taskQueue,
        workflowId: `rogue-${randomUUID()}`,
        args: [
          h.taskQueue,
          'performTool',
          { toolId: REFUND, args: ATTACKER_REFUND, principal: 'agent:desk', ticket: copied },
        ],
      });
      await expect(attempt).rejects.toMatchObject({ cause: { cause: { type: 'ToolUnavailable' } } });
      expect(attackerRefunds()).toEqual([]);
    });

    it("refuses a call from a run that wrote a real run's opening into its own history", async () => {
      const real = await run(h, manifest, refundScript, { credential: (wf) => issuer.runCredential('agent:desk', wf) });
      await real.handle.result();
      const opening = await openingOf(h, real.workflowId);
      const attempt = h.client.workflow.execute('rogueOpening', {
        taskQueue: rogue.taskQueue,
        workflowId: `rogue-${randomUUID()}`,
        args: [h.taskQueue, opening, { toolId: REFUND, args: ATTACKER_REFUND, principal: 'agent:desk' }],
      });
      await expect(attempt).rejects.toMatchObject({
        cause: { cause: { type: 'ToolUnavailable', message: expect.stringContaining('no ticket this worker issued') } },
      });
      expect(attackerRefunds()).toEqual([]);
    });

    it('refuses authorizeRun scheduled as an activity, so no ticket can be had from outside', async () => {
      const attempt = h.client.workflow.execute('rogueActivity', {
        taskQueue: rogue.taskQueue,
        workflowId: `rogue-${randomUUID()}`,
        args: [h.taskQueue, 'authorizeRun', { principal: 'agent:desk' }],
      });
      await expect(attempt).rejects.toMatchObject({
        cause: { cause: { type: 'IdentityRefused', message: expect.stringContaining('local activity') } },
      });
    });

    it('refuses a delegatedCall child whose carried ticket this worker did not issue to its parent', async () => {
      const carry = {
        identity: { principal: 'agent:desk', groups: [] },
        grants: [REFUND],
        capabilities: [],
        mac: 'A'.repeat(22),
      };
      const attempt = h.client.workflow.execute('rogueDelegation', {
        taskQueue: rogue.taskQueue,
        workflowId: `rogue-${randomUUID()}`,
        args: [h.taskQueue, { toolId: REFUND, args: ATTACKER_REFUND, carry }],
      });
      await expect(attempt).rejects.toMatchObject({ cause: { cause: { type: 'IdentityRefused' } } });
      expect(attackerRefunds()).toEqual([]);
    });

    it('a model turn without a ticket reaches no endpoint', async () => {
      const attempt = h.client.workflow.execute('rogueActivity', {
        taskQueue: rogue.taskQueue,
        workflowId: `rogue-${randomUUID()}`,
        args: [h.taskQueue, 'modelTurn', { model: { endpoint: 'scripted' }, messages: [], principal: 'agent:desk' }],
      });
      await expect(attempt).rejects.toMatchObject({ cause: { cause: { type: 'ModelRefused' } } });
    });
  });

  describe('a chain, a child and a reset run need no credential of their own', () => {
    /** Resets the closed run as an operator does, to the end of its `task`-th completed workflow task (from 0); its result. */
    async function resetAt(workflowId: string, task: number): Promise<{ journal: { outcome?: string }[] }> {
      const firstRunId = (await h.client.workflow.getHandle(workflowId).describe()).runId;
      const events = await historyOf(h.client, workflowId);
      const resetTo = events.filter((e) => e.workflowTaskCompletedEventAttributes)[task]!.eventId!;
      const { runId } = await h.client.workflowService.resetWorkflowExecution({
        namespace: 'default',
        workflowExecution: { workflowId, runId: firstRunId },
        reason: 'operator reset in a test',
        workflowTaskFinishEventId: resetTo,
        requestId: randomUUID(),
      });
      return h.client.workflow.getHandle(workflowId, runId).result();
    }

    it('a run an operator resets past its first answer keeps its ticket: the calls after the reset point go through', async () => {
      const r = await run(h, manifest, refundScript, { credential: (wf) => issuer.runCredential('agent:desk', wf) });
      await r.handle.result();
      const before = desk.payments.all().length;
      // The second completed workflow task: after the worker's answer (the marker) and the first model turn's scheduling.
      const reset = await resetAt(r.workflowId, 1);
      expect(reset.journal.map((e: { outcome?: string }) => e.outcome)).toEqual(['ok', 'ok']);
      // The refund ran again under the same effect key: the payments service kept one.
      expect(desk.payments.all().length).toBe(before);
    });

    it('a run reset to its first workflow task verifies its credential again: the same run, so the spent token is its own', async () => {
      const r = await run(h, manifest, refundScript, { credential: (wf) => issuer.runCredential('agent:desk', wf) });
      await r.handle.result();
      const before = desk.payments.all().length;
      // The first completed workflow task holds the worker's answer: a reset there asks the worker again.
      const reset = await resetAt(r.workflowId, 0);
      expect(reset.journal.map((e: { outcome?: string }) => e.outcome)).toEqual(['ok', 'ok']);
      expect(desk.payments.all().length).toBe(before);
    });

    it('a run that continues as new carries its ticket, after its credential would have been checked', async () => {
      const r = await run(h, manifest, refundScript, {
        credential: (wf) => issuer.runCredential('agent:desk', wf),
        continueAsNewAfterEvents: 8,
      });
      const result = await r.handle.result();
      expect(result.status).toBe('completed');
      expect(result.summary).toMatchObject({ calls: 2 });
      const runs = [];
      for await (const w of h.client.workflow.list({ query: `WorkflowId = '${r.workflowId}'` })) runs.push(w);
      expect(runs.length).toBeGreaterThan(1);
      // The last run's input, carry and all, read from its history and started again as a fresh run of the closed id.
      const started = (await historyOf(h.client, r.workflowId))[0]!.workflowExecutionStartedEventAttributes!;
      const carried = defaultPayloadConverter.fromPayload<AgentRunInput>(started.input!.payloads![0]!);
      expect(carried.carry).toBeDefined();
      const replayed = await h.client.workflow.start('agentRun', {
        taskQueue: h.taskQueue,
        workflowId: r.workflowId,
        args: [
          { ...carried, prompt: attackerScript.prompt, model: { endpoint: 'scripted', script: attackerScript.turns } },
        ],
      });
      await expect(replayed.result()).rejects.toMatchObject({
        cause: { type: 'RunRefused', message: expect.stringContaining('may not start from carried state') },
      });
      expect(scheduledActivities(await historyOf(h.client, r.workflowId))).toEqual([]);
      expect(attackerRefunds()).toEqual([]);
    });
  });
});

describe('attack 3: a fact is its writer’s words', () => {
  const example = path.resolve(__dirname, '..', '..', 'examples', 'memory');
  const base = loadManifest(path.join(example, 'manifest.yaml')).manifest;
  const key = generateLedgerKey('k-id');

  async function world(shareWithBob: boolean) {
    const dir = testDir('identity-facts');
    const manifest: Manifest = {
      ...base,
      principals: {
        'user:alice': { tools: '*', capabilities: [], models: '*', share_facts_with: shareWithBob ? ['user:bob'] : [] },
        'user:bob': { tools: '*', capabilities: [], models: '*', share_facts_with: [] },
      },
    };
    const issuer = await testIssuer();
    const h = await harness(`facts-${randomUUID()}`);
    await h.runWorker({
      manifest,
      tools: memoryTools(dir),
      ledger: { keyId: key.keyId, privateKey: key.privateKey },
      identity: issuer.identity,
      insecureAssertedPrincipals: false,
    });
    return { dir, manifest, issuer, h };
  }

  it("user B does not pay the IBAN user A noted; A's fact shared with B does", async () => {
    for (const shared of [false, true]) {
      const w = await world(shared);
      try {
        const a = await run(w.h, w.manifest, rememberIban, {
          credential: (wf) => w.issuer.runCredential('user:alice', wf),
        });
        expect((await a.handle.result()).journal.map((e: { outcome?: string; rule?: string }) => e.outcome)).toEqual([
          'ok',
        ]);
        // The signed reference names whose words the fact is.
        expect(factStore(w.dir).all().at(-1)!.produced_by).toMatchObject({
          principal: 'user:alice',
          trustedArgs: true,
        });
        const b = await run(w.h, w.manifest, payNoted, { credential: (wf) => w.issuer.runCredential('user:bob', wf) });
        const journal = (await b.handle.result()).journal;
        const paid = paymentStore(w.dir)
          .all()
          .map((p) => p.recipient);
        if (!shared) {
          expect(journal.map((e: { outcome?: string; rule?: string }) => [e.outcome, e.rule ?? null])).toEqual([
            ['ok', null],
            ['refused', 'protected_field:/recipient'],
          ]);
          expect(journal[0]!.cited).toEqual([
            expect.objectContaining({
              trusted: false,
              reason: 'written by user:alice, who does not share facts with user:bob',
            }),
          ]);
          expect(paid).toEqual([]);
        } else {
          expect(journal.map((e: { outcome?: string; rule?: string }) => e.outcome)).toEqual(['ok', 'ok']);
          expect(paid).toEqual([ATTACKER_IBAN]);
        }
      } finally {
        await w.h.close();
      }
    }
    expect(MY_IBAN).not.toBe(ATTACKER_IBAN);
  });
});

describe('keys rotated at the issuer', () => {
  it('a JWKS file is read again when it changes: a token under the new key verifies, an unknown key does not', async () => {
    const dir = testDir('identity-jwks');
    const file = path.join(dir, 'jwks.json');
    const old = await generateIssuerKey('https://idp.example', 'k-old');
    const rotated = await generateIssuerKey('https://idp.example', 'k-new');
    fs.writeFileSync(file, JSON.stringify(old.jwks));
    const verifier = new CredentialVerifier({
      issuers: [{ issuer: 'https://idp.example', audience: 'aud', jwksFile: file }],
    });
    const opts = { workflowId: 'wf-1', requireBinding: true, what: 'the run' };
    const claims = { audience: 'aud', subject: 'agent:desk', workflowId: 'wf-1' };
    await expect(verifier.verify(await signCredential(old, claims), opts)).resolves.toMatchObject({
      principal: 'agent:desk',
    });
    await expect(verifier.verify(await signCredential(rotated, claims), opts)).rejects.toMatchObject({
      code: 'IdentityRefused',
    });
    fs.writeFileSync(file, JSON.stringify({ keys: [...old.jwks.keys, ...rotated.jwks.keys] }));
    await expect(verifier.verify(await signCredential(rotated, claims), opts)).resolves.toMatchObject({
      principal: 'agent:desk',
    });
    await expect(verifier.verify(await signCredential(old, claims), opts)).resolves.toMatchObject({
      principal: 'agent:desk',
    });
  });
});
