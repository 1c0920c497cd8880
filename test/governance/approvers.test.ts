// Attack 2 of the identity issue, self-approval: a refund the gate escalates may be approved only by a
// declared approver whose credential the worker verified, never by the client that started the run, by
// a name it types, or by the run's own principal; and `decidedBy` is the verified subject.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import type { Manifest } from '../../catalog/manifest';
import { approve, deny } from '../../client';
import { main } from '../../cli';
import { idempotencyKey } from '../../common/effect-key';
import { workflowSpanSinks } from '../../activities/telemetry';
import { effectsFromHistory } from '../../inspect/journal';
import { WORKFLOW_INTERCEPTOR_MODULES, WORKFLOWS_PATH } from '../../runtime/workflow-modules';
import type { AgentRunResult } from '../../workflows/agent/run';
import type { ToolRunResult } from '../../workflows/tool-run';
import {
  DECISION_REJECTED,
  pendingEscalations,
  resolveEscalation,
  type EscalationDecision,
  type PendingEscalation,
} from '../../workflows/escalation';
import { agentInput } from '../support/agent';
import { supportDesk } from '../support/desk';
import { EXAMPLE_MANIFEST, exampleManifest, harness, testAddress, testDir, type Harness } from '../support/env';
import { loadManifest } from '../../runtime/manifest-file';
import { testIssuer, type TestIssuer } from '../support/identity';
import { SCENARIO_MANIFEST, scenarioTools } from '../support/scenario-tools';
import { waitFor } from '../support/wait';

const REFUND = 'tool://payments/refund';
/** The desk's principal: a member of the approvers' group, so its own token would be an approver's. */
const DESK = 'desk-lead@corp.example';
const FINANCE = 'finance-approvers';
const IDENTITY_MANIFEST = path.join(path.dirname(EXAMPLE_MANIFEST), 'manifest.identity.yaml');

describe('declared approvers (attack 2: self-approval)', () => {
  const dir = testDir('approvers');
  const { payments, tools } = supportDesk(dir);
  // The example: the refund asks a person when the gate questions it; finance members and the CFO may answer.
  const manifest: Manifest = loadManifest(IDENTITY_MANIFEST).manifest;
  /** The injected ticket's refund to the attacker's account, twice: each waits for a person. */
  const refund = (cents: number) => ({
    tool_calls: [
      {
        name: 'payments__refund',
        arguments: { account_id: 'acct_attacker_991', amount_cents: cents, currency: 'EUR', memo: 'policy' },
      },
    ],
  });
  const script = {
    prompt: 'Handle ticket T-101.',
    turns: [
      { tool_calls: [{ name: 'tickets__read_ticket', arguments: { ticket_id: 'T-101' } }] },
      refund(95000),
      refund(94000),
      { final: 'done' },
    ],
  };

  let h: Harness;
  let issuer: TestIssuer;
  let worker: { stop(): Promise<void> } | undefined;
  beforeAll(async () => {
    issuer = await testIssuer();
    h = await harness(`approvers-${randomUUID()}`);
    worker = await serve();
  });
  afterAll(async () => {
    await worker?.stop();
    await h?.close();
  });

  /** A worker with the issuer's identity that serves until `stop()`: a restart is a stop and a new one. */
  async function serve(): Promise<{ stop(): Promise<void> }> {
    const w = await h.startWorker({ manifest, tools, identity: issuer.identity, insecureAssertedPrincipals: false });
    const done = w.run();
    return {
      async stop() {
        w.shutdown();
        await done;
      },
    };
  }

  async function start(): Promise<WorkflowHandle> {
    const workflowId = `approvers-${randomUUID()}`;
    const credential = await issuer.runCredential(DESK, workflowId, [FINANCE]);
    return h.client.workflow.start('agentRun', {
      taskQueue: h.taskQueue,
      workflowId,
      args: [{ ...agentInput(manifest, script), principal: DESK, credential }],
    });
  }

  const refunds = () => payments.all().filter((p) => p.account === 'acct_attacker_991');

  async function waiting(handle: WorkflowHandle, except?: string): Promise<PendingEscalation> {
    return waitFor(`run ${handle.workflowId} to ask for approval`, 120_000, async () =>
      (await handle.query(pendingEscalations)).find((p) => p.effectKey !== except),
    );
  }

  /** The run refuses the decision: a typed DecisionRejected with its reason; the call keeps waiting. */
  async function rejected(
    handle: WorkflowHandle,
    decision: EscalationDecision,
  ): Promise<{ reason: string; message: string }> {
    const landed = refunds().length;
    const err: unknown = await handle.executeUpdate(resolveEscalation, { args: [decision] }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(WorkflowUpdateFailedError);
    const cause = (err as WorkflowUpdateFailedError).cause;
    expect(cause).toBeInstanceOf(ApplicationFailure);
    const failure = cause as ApplicationFailure;
    expect(failure.type).toBe(DECISION_REJECTED);
    expect(failure.nonRetryable).toBe(true);
    const reason = (failure.details?.[0] as { reason: string }).reason;
    // Nothing landed, and the call still waits under the same key.
    expect(refunds()).toHaveLength(landed);
    expect((await handle.query(pendingEscalations)).map((p) => p.effectKey)).toContain(decision.effectKey);
    // The worker failing to check is no answer about who decides: the test fails with its message.
    if (reason === 'unavailable') throw new Error(failure.message);
    return { reason, message: failure.message };
  }

  it("an approver's credential decides one call: presented to another run, it decides nothing there", async () => {
    const cfo = await issuer.approverCredential('cfo@corp.example');
    const first = await start();
    const asked = await waiting(first);
    await first.executeUpdate(resolveEscalation, {
      args: [{ effectKey: asked.effectKey, decision: 'deny', credential: cfo }],
    });
    // Read from the first run's history, the same token answers a call of another run: refused, and the call waits.
    const second = await start();
    const askedAgain = await waiting(second);
    const { reason, message } = await rejected(second, {
      effectKey: askedAgain.effectKey,
      decision: 'approve',
      credential: cfo,
    });
    expect(reason).toBe('replayed');
    expect(message).toContain('already used');
    for (const handle of [first, second]) await handle.terminate('test done');
  });

  it("the example declares the support desk's tools, its refund asking a person, and who may answer", () => {
    const desk = exampleManifest();
    expect(manifest.tools).toEqual(desk.tools.map((t) => (t.id === REFUND ? { ...t, approval: 'on_violation' } : t)));
    expect(manifest.approvers?.filter((a) => a.tools !== '*' && a.tools.includes(REFUND))).toEqual([
      expect.objectContaining({ groups: [FINANCE], decisions: ['approve', 'deny'], own_run: false }),
      expect.objectContaining({ subjects: ['cfo@corp.example'], own_run: false }),
    ]);
  });

  it('refuses the starter, a typed name, the run itself and strangers; a declared approver approves, a second one too', async () => {
    const handle = await start();
    const first = await waiting(handle);
    expect(first).toMatchObject({ toolId: REFUND, kind: 'approval', rule: 'protected_field:/account_id' });
    const effectKey = first.effectKey;

    // (a) The client that started the run approves with no credential, in the CFO's name, or with no name.
    expect(await rejected(handle, { effectKey, decision: 'approve', by: 'cfo@corp.example' })).toMatchObject({
      reason: 'no_credential',
    });
    expect(await rejected(handle, { effectKey, decision: 'approve' })).toMatchObject({ reason: 'no_credential' });
    // (b) With the run's own credential (bound to this run, its principal in the approvers' group): its own run.
    const own = await issuer.runCredential(DESK, handle.workflowId, [FINANCE]);
    expect(await rejected(handle, { effectKey, decision: 'approve', credential: own })).toMatchObject({
      reason: 'own_run',
    });
    // The run's principal with a plain token of its own is the same person.
    const ownPlain = await issuer.approverCredential(DESK, [FINANCE]);
    expect(await rejected(handle, { effectKey, decision: 'approve', credential: ownPlain })).toMatchObject({
      reason: 'own_run',
    });
    // (c) A valid token of someone who is no approver, naming the CFO.
    const mallory = await issuer.approverCredential('mallory@corp.example', ['support']);
    const stranger = await rejected(handle, {
      effectKey,
      decision: 'approve',
      by: 'cfo@corp.example',
      credential: mallory,
    });
    expect(stranger).toMatchObject({ reason: 'not_an_approver' });
    expect(stranger.message).toMatch(/mallory@corp\.example is not a declared approver/);
    // Tokens the worker does not accept: another issuer's, one for another run, a forged signature.
    const elsewhere = await testIssuer('https://elsewhere.test');
    const foreign = await elsewhere.approverCredential('cfo@corp.example');
    expect(await rejected(handle, { effectKey, decision: 'approve', credential: foreign })).toMatchObject({
      reason: 'bad_credential',
    });
    const otherRun = await issuer.runCredential('cfo@corp.example', `other-${randomUUID()}`);
    expect(await rejected(handle, { effectKey, decision: 'approve', credential: otherRun })).toMatchObject({
      reason: 'bad_credential',
    });
    const cfo = await issuer.approverCredential('cfo@corp.example');
    const [head, body] = cfo.split('.');
    const forged = `${head}.${body}.${(await elsewhere.approverCredential('x')).split('.')[2]}`;
    expect(await rejected(handle, { effectKey, decision: 'approve', credential: forged })).toMatchObject({
      reason: 'bad_credential',
    });
    // A declared approver whose decision names someone else: the record would lie, so it is refused.
    const ann = await issuer.approverCredential('ann@corp.example', [FINANCE]);
    expect(
      await rejected(handle, { effectKey, decision: 'approve', by: 'cfo@corp.example', credential: ann }),
    ).toMatchObject({ reason: 'by_mismatch' });

    // The rejected attempts (each an accepted update that failed, most after a local activity) replay on
    // a fresh worker, which then takes the next decision.
    await worker!.stop();
    worker = await serve();

    // (d) A declared approver, by group: the refund lands once, approved by her verified subject.
    expect(await approve(h.client, handle.workflowId, effectKey, { credential: ann })).toEqual({
      by: 'ann@corp.example',
    });
    const second = await waiting(handle, effectKey);
    expect(refunds()).toHaveLength(1);

    // The approver's token, read from the run's history, decides nothing more in this run.
    expect(await rejected(handle, { effectKey: second.effectKey, decision: 'approve', credential: ann })).toMatchObject(
      { reason: 'replayed' },
    );
    // (e) A second declared approver, by subject, through the CLI with the credential in the environment.
    const out: string[] = [];
    process.env.TOOLPLANE_CREDENTIAL = cfo;
    try {
      const code = await main(
        ['node', 'toolplane', 'approve', handle.workflowId, second.effectKey, '--address', testAddress()],
        (l) => out.push(l),
        (l) => out.push(l),
      );
      expect({ code, out }).toEqual({
        code: 0,
        out: [`${handle.workflowId}: ${second.effectKey} approved by cfo@corp.example`],
      });
    } finally {
      delete process.env.TOOLPLANE_CREDENTIAL;
    }

    const result = (await handle.result()) as AgentRunResult;
    expect(result.answer).toBe('done');
    const approved = result.journal.filter((e) => e.toolId === REFUND);
    expect(approved.map((e) => [e.decision, e.decidedBy])).toEqual([
      ['approved', 'ann@corp.example'],
      ['approved', 'cfo@corp.example'],
    ]);
    // Each approved refund landed exactly once, under this run's keys.
    const keys = approved.map((e) => idempotencyKey(handle.workflowId, e.effectKey!));
    expect(
      refunds()
        .map((p) => p.idempotencyKey)
        .sort(),
    ).toEqual([...keys].sort());

    // What `show` reads from history: the verified subjects, never the names the attempts typed.
    const history = await handle.fetchHistory();
    const effects = effectsFromHistory(history.events ?? [], result.journal);
    expect(effects.filter((v) => v.toolId === REFUND).map((v) => v.personDecisions)).toEqual([
      ['approve by ann@corp.example'],
      ['approve by cfo@corp.example'],
    ]);
    // The history (local activities inside the update handler, rejected attempts) replays.
    await Worker.runReplayHistory(
      {
        workflowsPath: WORKFLOWS_PATH,
        interceptors: { workflowModules: WORKFLOW_INTERCEPTOR_MODULES },
        sinks: workflowSpanSinks(),
      },
      history,
      handle.workflowId,
    );
  });

  it('a declared approver denies; the refund never lands and the denial is hers', async () => {
    const before = refunds().length;
    const handle = await start();
    const first = await waiting(handle);
    const ann = await issuer.approverCredential('ann@corp.example', [FINANCE]);
    expect(
      await deny(h.client, handle.workflowId, first.effectKey, { credential: ann, reason: 'not a customer' }),
    ).toEqual({ by: 'ann@corp.example' });
    const second = await waiting(handle, first.effectKey);
    const bea = await issuer.approverCredential('bea@corp.example', [FINANCE]);
    await deny(h.client, handle.workflowId, second.effectKey, { credential: bea, reason: 'again' });
    const result = (await handle.result()) as AgentRunResult;
    expect(result.journal.filter((e) => e.toolId === REFUND).map((e) => [e.decision, e.decidedBy, e.outcome])).toEqual([
      ['denied', 'ann@corp.example', 'refused'],
      ['denied', 'bea@corp.example', 'refused'],
    ]);
    expect(refunds()).toHaveLength(before);
  });
});

describe('declared approvers resolve in-doubt calls', () => {
  const dir = testDir('approvers-in-doubt');
  const scenario = scenarioTools(dir);
  const flaky = loadManifest(SCENARIO_MANIFEST).manifest;
  // On-call may resolve any in-doubt call; finance may only approve or deny.
  const manifest: Manifest = {
    ...flaky,
    approvers: [
      { tools: '*', groups: ['oncall'], subjects: [], decisions: ['resolve'], own_run: false },
      { tools: '*', groups: [FINANCE], subjects: [], decisions: ['approve', 'deny'], own_run: false },
    ],
  };
  let h: Harness;
  let issuer: TestIssuer;
  beforeAll(async () => {
    issuer = await testIssuer();
    h = await harness(`approvers-in-doubt-${randomUUID()}`);
    await h.runWorker({
      manifest,
      tools: scenario.tools,
      identity: issuer.identity,
      insecureAssertedPrincipals: false,
    });
  });
  afterAll(() => h?.close());

  it('an approver who may only approve cannot resolve; on-call resolves through the CLI, recorded as its subject', async () => {
    const workflowId = `approvers-in-doubt-${randomUUID()}`;
    const args = { to: `ops-${randomUUID()}@example.com`, text: 'hello' };
    const handle = await h.client.workflow.start('toolRun', {
      taskQueue: h.taskQueue,
      workflowId,
      args: [
        {
          credential: await issuer.runCredential('batch@corp.example', workflowId),
          calls: [{ toolId: 'tool://flaky/notify', args }],
        },
      ],
    });
    const pending = await waitFor('the in-doubt call to wait', 120_000, async () =>
      (await handle.query(pendingEscalations)).find((p) => p.kind === 'in_doubt'),
    );
    const sends = () => scenario.store.all().filter((r) => JSON.stringify(r.args) === JSON.stringify(args)).length;
    expect(sends()).toBe(1);
    const ann = await issuer.approverCredential('ann@corp.example', [FINANCE]);
    const refused = await handle
      .executeUpdate(resolveEscalation, {
        args: [{ effectKey: pending.effectKey, decision: 'retry', credential: ann }],
      })
      .then(
        () => undefined,
        (e: unknown) => (e as WorkflowUpdateFailedError).cause as ApplicationFailure,
      );
    expect(refused?.type).toBe(DECISION_REJECTED);
    expect(refused?.details?.[0]).toEqual({ reason: 'not_an_approver' });
    expect(refused?.message).toMatch(
      /ann@corp\.example is not a declared approver who may resolve tool:\/\/flaky\/notify/,
    );
    expect(sends()).toBe(1);

    // On-call resolves with its token in a file: sent again, once.
    const file = path.join(dir, 'oncall.jwt');
    fs.writeFileSync(file, await issuer.approverCredential('olu@corp.example', ['oncall']));
    const out: string[] = [];
    const code = await main(
      [
        'node',
        'toolplane',
        'resolve',
        workflowId,
        pending.effectKey,
        'retry',
        '--credential-file',
        file,
        '--address',
        testAddress(),
      ],
      (l) => out.push(l),
      (l) => out.push(l),
    );
    expect({ code, out }).toEqual({ code: 0, out: [`${workflowId}: ${pending.effectKey} retry by olu@corp.example`] });
    const result = (await handle.result()) as ToolRunResult;
    expect(result.outputs[0]).toEqual({ delivered: true });
    expect(result.journal[0]).toMatchObject({ recovery: 'escalated_retry', outcome: 'ok' });
    expect(sends()).toBe(2);
    const effects = effectsFromHistory((await handle.fetchHistory()).events ?? [], result.journal);
    expect(effects[0]?.personDecisions).toEqual(['retry by olu@corp.example']);
  });
});
