// The AI SDK's tool approval protocol over toolplane's escalations: a refund the gate escalates reaches
// an app as a `tool-approval-request` part; the app's `tool-approval-response` (a part, or the `tool`
// ModelMessage it holds) approves or denies it through the declared approvers' check.
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import type { ModelMessage, ToolApprovalRequestOutput, ToolApprovalResponse, ToolSet } from 'ai';
import type { Manifest } from '../../catalog/manifest';
import {
  approvalRequestOf,
  approvalRequests,
  ApprovalResponseRefused,
  type ApprovalRequestedEvent,
  type StreamedEvent,
  streamRun,
  ApprovalResponseRefusedReason,
  DECISION_REJECTED,
  DecisionRejectedReason,
  respondToApprovals,
} from '../../client';
import { idempotencyKey } from '../../common/effect-key';
import type { AgentRunResult } from '../../workflows/agent/run';
import type { AiSdkAgentResult } from '../../examples/ai-sdk-agent/workflows';
import { agentInput } from '../support/agent';
import { aiSdkAgentInput, runAiSdkAgentWorker } from '../support/ai-sdk-agent';
import { supportDesk } from '../support/desk';
import { EXAMPLE_MANIFEST, harness, testDir, type Harness } from '../support/env';
import { loadManifest } from '../../runtime/manifest-file';
import { testIssuer, type TestIssuer } from '../support/identity';
import { waitFor } from '../support/wait';

const REFUND = 'tool://payments/refund';
const DESK = 'desk-lead@corp.example';
const FINANCE = 'finance-approvers';
const IDENTITY_MANIFEST = path.join(path.dirname(EXAMPLE_MANIFEST), 'manifest.identity.yaml');
const ATTACKER = 'acct_attacker_991';

describe("approvals in the AI SDK's protocol", () => {
  const dir = testDir('approval-protocol');
  const { payments, tools } = supportDesk(dir);
  // The refund asks a person when the gate questions it; finance members may answer.
  const manifest: Manifest = loadManifest(IDENTITY_MANIFEST).manifest;
  const refundArgs = (cents: number) => ({
    account_id: ATTACKER,
    amount_cents: cents,
    currency: 'EUR',
    memo: 'policy',
  });
  const script = {
    prompt: 'Handle ticket T-101.',
    turns: [
      { tool_calls: [{ name: 'tickets__read_ticket', arguments: { ticket_id: 'T-101' } }] },
      { tool_calls: [{ name: 'payments__refund', arguments: refundArgs(95000) }] },
      { tool_calls: [{ name: 'payments__refund', arguments: refundArgs(94000) }] },
      { final: 'done' },
    ],
  };

  let h: Harness;
  let issuer: TestIssuer;
  let aiSdk: Awaited<ReturnType<typeof runAiSdkAgentWorker>> | undefined;
  beforeAll(async () => {
    issuer = await testIssuer();
    h = await harness(`approval-protocol-${randomUUID()}`);
    await h.runWorker({ manifest, tools, identity: issuer.identity, insecureAssertedPrincipals: false });
  });
  afterAll(async () => {
    await aiSdk?.shutdown();
    await h?.close();
  });

  async function start(): Promise<WorkflowHandle> {
    const workflowId = `approval-protocol-${randomUUID()}`;
    const credential = await issuer.runCredential(DESK, workflowId, [FINANCE]);
    return h.client.workflow.start('agentRun', {
      taskQueue: h.taskQueue,
      workflowId,
      args: [{ ...agentInput(manifest, script), principal: DESK, credential }],
    });
  }

  /** The run's next approval request (other than `except`), as an app would receive it. */
  async function requested(handle: WorkflowHandle, except?: string): Promise<ToolApprovalRequestOutput<ToolSet>> {
    return waitFor(`run ${handle.workflowId} to request an approval`, 120_000, async () =>
      (await approvalRequests(h.client, handle.workflowId)).find((r) => r.approvalId !== except),
    );
  }

  const attackerRefunds = () => payments.all().filter((p) => p.account === ATTACKER);

  it('a waiting refund is a tool-approval-request; a tool message approved by a declared approver lands it once', async () => {
    const before = attackerRefunds().length;
    const handle = await start();
    const request = await requested(handle);
    // The part an app's approval UI renders: the tool by the name the model was offered, what it sends, and why.
    expect(request).toEqual({
      type: 'tool-approval-request',
      approvalId: expect.stringMatching(/^ek-/),
      toolCall: {
        type: 'tool-call',
        toolCallId: expect.any(String),
        toolName: 'payments__refund',
        input: refundArgs(95000),
      },
      reason: expect.stringContaining('protected_field:/account_id'),
    });
    // Asked again, the same approval id: it is derived from the waiting call, not made up per question.
    expect((await approvalRequests(h.client, handle.workflowId)).map((r) => r.approvalId)).toEqual([
      request.approvalId,
    ]);
    // The run's stream asks the same question: its approval-requested event is the same part.
    let streamed: StreamedEvent | undefined;
    for await (const e of streamRun(h.client, handle.workflowId, { tokens: false })) {
      if (e.type === 'approval-requested') {
        streamed = e;
        break;
      }
    }
    expect(streamed?.type).toBe('approval-requested');
    expect(approvalRequestOf(streamed as ApprovalRequestedEvent)).toEqual(request);

    // The app's answer, as an AI SDK app holds it after its approval UI (a `tool` ModelMessage).
    const response: ToolApprovalResponse = {
      type: 'tool-approval-response',
      approvalId: request.approvalId,
      approved: true,
    };
    const message: ModelMessage = { role: 'tool', content: [response] };

    // (a) Without an approver's credential: refused by the run as `approve` is today; nothing lands, it keeps waiting.
    const noCredential: unknown = await respondToApprovals(h.client, handle.workflowId, message).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(noCredential).toBeInstanceOf(WorkflowUpdateFailedError);
    const failure = (noCredential as WorkflowUpdateFailedError).cause;
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect((failure as ApplicationFailure).type).toBe(DECISION_REJECTED);
    expect((failure as ApplicationFailure).details?.[0]).toEqual({ reason: DecisionRejectedReason.NoCredential });
    // (b) An approval id the run never gave: typed, naming it, before anything is sent.
    const ann = await issuer.approverCredential('ann@corp.example', [FINANCE]);
    const bogus = 'ek-' + 'A'.repeat(43);
    const unknown: unknown = await respondToApprovals(
      h.client,
      handle.workflowId,
      { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: bogus, approved: true }] },
      { credential: ann },
    ).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(unknown).toBeInstanceOf(ApprovalResponseRefused);
    expect((unknown as ApprovalResponseRefused).data).toEqual({
      workflowId: handle.workflowId,
      approvalId: bogus,
      reason: ApprovalResponseRefusedReason.NotPending,
    });
    expect((unknown as Error).message).toContain(bogus);
    // So is a message holding no approval response (an assistant message given by mistake).
    await expect(
      respondToApprovals(h.client, handle.workflowId, { role: 'assistant', content: 'ok' }, { credential: ann }),
    ).rejects.toMatchObject({
      code: 'ApprovalResponseRefused',
      data: { reason: ApprovalResponseRefusedReason.NoResponse },
    });
    expect(attackerRefunds()).toHaveLength(before);
    expect((await approvalRequests(h.client, handle.workflowId)).map((r) => r.approvalId)).toEqual([
      request.approvalId,
    ]);

    // (c) A declared approver's credential: approved, recorded as her verified subject.
    expect(await respondToApprovals(h.client, handle.workflowId, message, { credential: ann })).toEqual([
      { approvalId: request.approvalId, effectKey: request.approvalId, decision: 'approve', by: 'ann@corp.example' },
    ]);
    // Already decided: the same response again is refused, typed, and nothing lands twice.
    const second = await requested(handle, request.approvalId);
    const cfo = await issuer.approverCredential('cfo@corp.example');
    await expect(respondToApprovals(h.client, handle.workflowId, message, { credential: cfo })).rejects.toMatchObject({
      code: 'ApprovalResponseRefused',
      data: { approvalId: request.approvalId, reason: ApprovalResponseRefusedReason.NotPending },
    });

    // The second refund, approved by the CFO with a bare part.
    await respondToApprovals(
      h.client,
      handle.workflowId,
      {
        type: 'tool-approval-response',
        approvalId: second.approvalId,
        approved: true,
        reason: 'checked with the bank',
      },
      { credential: cfo },
    );
    const result = (await handle.result()) as AgentRunResult;
    expect(result.answer).toBe('done');
    const refunds = result.journal.filter((e) => e.toolId === REFUND);
    expect(refunds.map((e) => [e.decision, e.decidedBy, e.outcome])).toEqual([
      ['approved', 'ann@corp.example', 'ok'],
      ['approved', 'cfo@corp.example', 'ok'],
    ]);
    // The approval ids were the calls' effect keys, and the tool call ids the model's.
    expect(refunds.map((e) => e.effectKey)).toEqual([request.approvalId, second.approvalId]);
    expect(refunds[0]!.modelCallId).toBe(request.toolCall.toolCallId);
    expect(refunds[1]!.modelCallId).toBe(second.toolCall.toolCallId);
    // Each approved refund landed exactly once, under this run's keys.
    expect(
      attackerRefunds()
        .slice(before)
        .map((p) => p.idempotencyKey)
        .sort(),
    ).toEqual(refunds.map((e) => idempotencyKey(handle.workflowId, e.effectKey!)).sort());
  });

  it('approved: false denies with its reason; nothing lands and the run finishes with the denial', async () => {
    const before = attackerRefunds().length;
    const handle = await start();
    const first = await requested(handle);
    // The tool message an app holds after its approval UI denied the refund.
    const bea = await issuer.approverCredential('bea@corp.example', [FINANCE]);
    // The same approval answered twice in one message decides nothing.
    const twice: ModelMessage = {
      role: 'tool',
      content: [
        { type: 'tool-approval-response', approvalId: first.approvalId, approved: true },
        { type: 'tool-approval-response', approvalId: first.approvalId, approved: false },
      ],
    };
    await expect(respondToApprovals(h.client, handle.workflowId, twice, { credential: bea })).rejects.toMatchObject({
      code: 'ApprovalResponseRefused',
      data: { approvalId: first.approvalId, reason: ApprovalResponseRefusedReason.AnsweredTwice },
    });
    expect((await approvalRequests(h.client, handle.workflowId)).map((r) => r.approvalId)).toEqual([first.approvalId]);
    expect(
      await respondToApprovals(
        h.client,
        handle.workflowId,
        {
          role: 'tool',
          content: [
            { type: 'tool-approval-response', approvalId: first.approvalId, approved: false, reason: 'not a customer' },
          ],
        },
        { credential: bea },
      ),
    ).toEqual([
      { approvalId: first.approvalId, effectKey: first.approvalId, decision: 'deny', by: 'bea@corp.example' },
    ]);
    const second = await requested(handle, first.approvalId);
    // Several responses at once: a credential per decision, from a function.
    const credentials = new Map<string, string>([
      [second.approvalId, await issuer.approverCredential('cfo@corp.example')],
    ]);
    const messages: ModelMessage[] = [
      { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: second.approvalId, approved: false }] },
    ];
    expect(
      await respondToApprovals(h.client, handle.workflowId, messages, {
        credential: (response) => credentials.get(response.approvalId)!,
      }),
    ).toEqual([
      { approvalId: second.approvalId, effectKey: second.approvalId, decision: 'deny', by: 'cfo@corp.example' },
    ]);

    const result = (await handle.result()) as AgentRunResult;
    expect(result.answer).toBe('done');
    const refunds = result.journal.filter((e) => e.toolId === REFUND);
    expect(refunds.map((e) => [e.decision, e.decidedBy, e.outcome])).toEqual([
      ['denied', 'bea@corp.example', 'refused'],
      ['denied', 'cfo@corp.example', 'refused'],
    ]);
    expect(refunds[0]!.reason).toMatch(/denied by bea@corp\.example: not a customer/);
    expect(attackerRefunds()).toHaveLength(before);
    expect(await approvalRequests(h.client, handle.workflowId)).toEqual([]);
  });

  it('on the AI SDK path (governedTools in generateText) the request carries the AI SDK tool call id, and approving resumes its execute', async () => {
    aiSdk = await runAiSdkAgentWorker(h, {
      manifest,
      tools,
      identity: issuer.identity,
      insecureAssertedPrincipals: false,
    });
    const before = attackerRefunds().length;
    const workflowId = `approval-protocol-ai-sdk-${randomUUID()}`;
    const turns = [
      script.turns[0]!,
      { tool_calls: [{ name: 'payments__refund', arguments: refundArgs(93000), id: 'call_refund_1' }] },
      { final: 'done' },
    ];
    const handle = await h.client.workflow.start('aiSdkAgent', {
      taskQueue: aiSdk.taskQueue,
      workflowId,
      args: [
        {
          ...aiSdkAgentInput(manifest, { prompt: script.prompt, turns }),
          principal: DESK,
          credential: await issuer.runCredential(DESK, workflowId, [FINANCE]),
        },
      ],
    });
    const request = await requested(handle);
    expect(request.toolCall).toEqual({
      type: 'tool-call',
      toolCallId: 'call_refund_1',
      toolName: 'payments__refund',
      input: refundArgs(93000),
    });
    const ann = await issuer.approverCredential('ann@corp.example', [FINANCE]);
    const message: ModelMessage = {
      role: 'tool',
      content: [{ type: 'tool-approval-response', approvalId: request.approvalId, approved: true }],
    };
    await respondToApprovals(h.client, workflowId, message, { credential: ann });
    const result = (await handle.result()) as AiSdkAgentResult;
    expect(result.text).toBe('done');
    expect(result.journal.filter((e) => e.toolId === REFUND).map((e) => [e.decision, e.decidedBy, e.outcome])).toEqual([
      ['approved', 'ann@corp.example', 'ok'],
    ]);
    expect(
      attackerRefunds()
        .slice(before)
        .map((p) => p.idempotencyKey),
    ).toEqual([idempotencyKey(workflowId, request.approvalId)]);
  });
});
