// Issue 46.2, the start race: run A's credential is in A's start event. Someone who reads it before A's
// first workflow task terminates A and starts A's workflow id with A's credential and input of their
// own. The credential is bound to A's input (`toolplane_input`), so the worker refuses the attacker's
// run, typed, before anything of theirs runs; an honest bound run goes through; a token that binds no
// input is refused by default and accepted only by an issuer configured for it.
import { randomUUID } from 'node:crypto';
import type { Manifest } from '../../catalog/manifest';
import { startAgentRun } from '../../client';
import { CredentialVerifier, type IdentityConfig } from '../../identity/credentials';
import { signCredential } from '../../identity/mint';
import type { AgentRunInput } from '../../workflows/agent/run';
import { agentInput, type Script } from '../support/agent';
import { refundScript, supportDesk } from '../support/desk';
import { exampleManifest, harness, testDir, type Harness } from '../support/env';
import { historyOf, scheduledActivities } from '../support/history';
import { testIssuer, TEST_AUDIENCE, type TestIssuer } from '../support/identity';

const ATTACKER_REFUND = { account_id: 'acct_attacker_991', amount_cents: 95000, currency: 'EUR' };
const attackerScript: Script = {
  prompt: 'Refund the customer.',
  turns: [{ tool_calls: [{ name: 'payments__refund', arguments: ATTACKER_REFUND }] }, { final: 'done' }],
};

describe('the start race (issue 46.2)', () => {
  const desk = supportDesk(testDir('start-race'));
  let issuer: TestIssuer;
  let identity: IdentityConfig;
  let h: Harness;
  const manifest: Manifest = {
    ...exampleManifest(),
    principals: { 'agent:desk': { tools: '*', capabilities: [], models: '*', share_facts_with: [] } },
  };
  const attackerRefunds = () => desk.payments.all().filter((p) => p.account === ATTACKER_REFUND.account_id);

  /** A's credential as a starter mints it: bound to the workflow id and to the run's input. */
  const boundCredential = (workflowId: string, input: AgentRunInput) =>
    signCredential(issuer.key, {
      audience: TEST_AUDIENCE,
      subject: 'agent:desk',
      workflowId,
      runInput: { workflowType: 'agentRun', input },
    });

  beforeAll(async () => {
    issuer = await testIssuer();
    // The worker's identity as a deployment writes it: nothing relaxed.
    identity = { issuers: [{ issuer: issuer.key.issuer, audience: TEST_AUDIENCE, jwks: issuer.key.jwks }] };
    h = await harness(`start-race-${randomUUID()}`);
  });
  afterAll(async () => {
    await h?.close();
  });

  it("terminate-starting A's id with A's credential and other input before A's first task runs nothing of the attacker's", async () => {
    const workflowId = `agent-${randomUUID()}`;
    const input = agentInput(manifest, refundScript, { principal: 'agent:desk' });
    input.credential = await boundCredential(workflowId, input);
    // No worker polls yet: A's first task has not run when the attacker reads its start event.
    const a = await h.client.workflow.start('agentRun', { taskQueue: h.taskQueue, workflowId, args: [input] });
    const [started] = (await historyOf(h.client, workflowId))
      .map((e) => e.workflowExecutionStartedEventAttributes?.input?.payloads?.[0])
      .filter((p) => p !== undefined);
    const stolen = (JSON.parse(Buffer.from(started!.data!).toString()) as AgentRunInput).credential!;
    await a.terminate('the attacker');
    const theirs = await h.client.workflow.start('agentRun', {
      taskQueue: h.taskQueue,
      workflowId,
      workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      args: [agentInput(manifest, attackerScript, { principal: 'agent:desk', credential: stolen })],
    });
    const worker = await h.runWorker({
      manifest,
      tools: desk.tools,
      identity,
      insecureAssertedPrincipals: false,
    });
    expect(worker).toBeDefined();
    await expect(theirs.result()).rejects.toMatchObject({
      cause: { type: 'IdentityRefused', message: expect.stringMatching(/issued for another input/) },
    });
    expect(scheduledActivities(await historyOf(h.client, workflowId))).toEqual([]);
    expect(attackerRefunds()).toEqual([]);

    // The honest start with a bound credential goes through on the same worker.
    const honestId = `agent-${randomUUID()}`;
    const honest = agentInput(manifest, refundScript, { principal: 'agent:desk' });
    honest.credential = await boundCredential(honestId, honest);
    const result = await h.client.workflow.execute('agentRun', {
      taskQueue: h.taskQueue,
      workflowId: honestId,
      args: [honest],
    });
    expect(result).toMatchObject({ status: 'completed' });
    // A client starting other input with a bound credential is told so before anything starts.
    const other = agentInput(manifest, attackerScript, { principal: 'agent:desk', credential: honest.credential });
    await expect(startAgentRun(h.client, other, { taskQueue: h.taskQueue, workflowId: honestId })).rejects.toThrow(
      /bound to another input/,
    );
    expect(desk.payments.all().filter((p) => p.account === 'acct_alice_001')).toHaveLength(1);
  });

  it('a run credential that binds no input is refused by default, typed; an issuer may be configured to accept it', async () => {
    const workflowId = `agent-${randomUUID()}`;
    const plain = await issuer.runCredential('agent:desk', workflowId);
    const run = await h.client.workflow.start('agentRun', {
      taskQueue: h.taskQueue,
      workflowId,
      args: [agentInput(manifest, attackerScript, { principal: 'agent:desk', credential: plain })],
    });
    await expect(run.result()).rejects.toMatchObject({
      cause: { type: 'IdentityRefused', message: expect.stringMatching(/names no input \(toolplane_input\)/) },
    });
    expect(attackerRefunds()).toEqual([]);
    const opts = { workflowId, requireBinding: true, what: 'the run', inputBinding: 'x' };
    const strict = new CredentialVerifier(identity);
    await expect(strict.verify(plain, opts)).rejects.toMatchObject({ data: { reason: 'wrong_input' } });
    const relaxed = new CredentialVerifier({ issuers: [{ ...identity.issuers[0]!, requireInputBinding: false }] });
    await expect(relaxed.verify(plain, opts)).resolves.toMatchObject({ principal: 'agent:desk' });
  });
});
