// The AI SDK's own UI machinery reads toolplane's approval request and writes the app's answer in the
// shape `respondToApprovals` takes: what a `useChat` app does between the two, without a server.
import {
  convertToModelMessages,
  readUIMessageStream,
  type ToolApprovalResponse,
  type UIMessage,
  type UIMessageChunk,
} from 'ai';
import { approvalRequestChunks, approvalRequestOf, type ApprovalAsked } from '../../client';
import { approvalResponsesOf } from '../../inspect/approval-protocol';
import { effectKey } from '../../common/effect-key';

const args = { account_id: 'acct_attacker_991', amount_cents: 95000, currency: 'EUR', memo: 'policy' };
const asked: ApprovalAsked = {
  toolId: 'tool://payments/refund',
  effectKey: effectKey({ tool: 'tool://payments/refund', args }, 3),
  args,
  reason: 'tool://payments/refund was refused (protected_field:/account_id: …); a person may approve it',
  modelCallId: 'call_2_0',
};

async function uiMessageOf(chunks: UIMessageChunk[]): Promise<UIMessage> {
  const stream = new ReadableStream<UIMessageChunk>({
    start(controller) {
      for (const c of [{ type: 'start', messageId: 'm1' } as const, ...chunks, { type: 'finish' } as const])
        controller.enqueue(c);
      controller.close();
    },
  });
  let last: UIMessage | undefined;
  for await (const m of readUIMessageStream({ stream })) last = m;
  return last!;
}

describe("approval requests in the AI SDK's shapes", () => {
  it('a call waiting for approval is a tool-approval-request part, its approval id the effect key', () => {
    expect(approvalRequestOf(asked)).toEqual({
      type: 'tool-approval-request',
      approvalId: asked.effectKey,
      toolCall: { type: 'tool-call', toolCallId: 'call_2_0', toolName: 'payments__refund', input: args },
      reason: asked.reason,
    });
    // A call no model made (a workflow's own call) is its own tool call.
    const { modelCallId: _, ...unasked } = asked;
    expect(approvalRequestOf(unasked).toolCall.toolCallId).toBe(asked.effectKey);
  });

  it("an app's UI message reads it as a tool part waiting for approval, and its answer converts to a response part", async () => {
    const message = await uiMessageOf(approvalRequestChunks(asked));
    const part = message.parts.find((p) => p.type === 'dynamic-tool' || p.type.startsWith('tool-'));
    expect(part).toMatchObject({
      toolCallId: 'call_2_0',
      state: 'approval-requested',
      input: args,
      approval: { id: asked.effectKey },
    });
    // What useChat's addToolApprovalResponse does to the part, then the server's convertToModelMessages.
    const answered: UIMessage = {
      ...message,
      parts: message.parts.map((p) =>
        p === part
          ? ({
              ...p,
              state: 'approval-responded',
              approval: { id: asked.effectKey, approved: false, reason: 'no' },
            } as typeof p)
          : p,
      ),
    };
    const models = await convertToModelMessages([answered]);
    const expected: ToolApprovalResponse = {
      type: 'tool-approval-response',
      approvalId: asked.effectKey,
      approved: false,
      reason: 'no',
    };
    expect(approvalResponsesOf(models)).toEqual([expect.objectContaining(expected)]);
  });
});
