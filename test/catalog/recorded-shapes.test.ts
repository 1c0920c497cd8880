// History format v1, revision 1: the worker's answer and a model turn's result are recorded without
// what the run restores. The run must restore exactly what the worker meant, and read the shapes
// recorded before the revision as they were.
import path from 'node:path';
import { toolDigest } from '../../catalog/digest';
import { withDefaults, withoutDefaults } from '../../catalog/tool-decl-defaults';
import { loadManifest } from '../../runtime/manifest-file';
import { readTurn } from '../../workflows/agent/turn';
import { recorded } from '../../activities/model/conversation';
import type { ModelTurnResult } from '../../common/wire';

const manifests = ['examples/support-desk/manifest.yaml', 'test/fixtures/scenario-manifest.yaml'].map(
  (f) => loadManifest(path.resolve(__dirname, '..', '..', f)).manifest,
);
const tools = manifests.flatMap((m) => m.tools);

describe("a tool's declaration in the worker's answer", () => {
  it.each(tools.map((t) => [t.id, t] as const))('%s restores to the digest the worker checks calls by', (_id, decl) => {
    const sent = withoutDefaults(decl);
    expect(toolDigest(withDefaults(sent))).toBe(toolDigest(decl));
    // What a declaration leaves at its default does not travel.
    if (decl.approval === 'none') expect(sent).not.toHaveProperty('approval');
    if (decl.redactions.length === 0) expect(sent).not.toHaveProperty('redactions');
  });

  it('an answer recorded whole reads as it was', () => {
    for (const decl of tools) expect(withDefaults(decl)).toEqual(decl);
  });

  it('keeps a field that differs from its default; restored defaults are not shared', () => {
    const refund = tools.find((t) => t.id === 'tool://payments/refund')!;
    const sent = withoutDefaults(refund);
    expect(sent.protected_fields).toEqual(refund.protected_fields);
    const lookup = tools.find((t) => t.id === 'tool://crm/lookup_customer')!;
    const a = withDefaults(withoutDefaults(lookup));
    const b = withDefaults(withoutDefaults(lookup));
    // Each restored declaration has defaults of its own: one run's change is no other's.
    a.sensitivity.max = 'public';
    expect(b.sensitivity.max).toBe('internal');
  });
});

describe("a model turn's result", () => {
  it("restores the assistant's role, empty content and the scripted model's call ids", () => {
    const recorded: ModelTurnResult = {
      message: {
        toolCalls: [
          { name: 'crm__lookup_customer', arguments: '{}' },
          { id: 'mine', name: 'x', arguments: '1' },
        ],
      },
      usage: { inputTokens: 3, outputTokens: 4 },
      transcript: 'sha256:ab',
    };
    expect(readTurn(recorded, 4)).toEqual({
      message: {
        role: 'assistant',
        content: '',
        toolCalls: [
          { id: 'call_4_0', name: 'crm__lookup_customer', arguments: '{}' },
          { id: 'mine', name: 'x', arguments: '1' },
        ],
      },
      usage: { inputTokens: 3, outputTokens: 4 },
      transcript: 'sha256:ab',
    });
  });

  it('records arguments that are exact JSON as their object, any other text as the model typed it', () => {
    const answer = {
      message: {
        role: 'assistant' as const,
        content: '',
        toolCalls: [
          { id: 'call_2_0', name: 'a', arguments: '{"email":"x@example.com","n":[1,2.5]}' },
          { id: 'call_2_1', name: 'b', arguments: '{ "email": "x@example.com" }' },
          { id: 'provider-id', name: 'c', arguments: 'not json' },
          { id: 'call_2_3', name: 'd', arguments: '[1]' },
        ],
      },
      usage: { inputTokens: 1, outputTokens: 2 },
      finishReason: 'tool_calls' as const,
      responseId: 'r9',
      transcript: 'sha256:ef',
    };
    const kept = recorded(answer, true, 2);
    expect(kept.message.toolCalls).toEqual([
      { name: 'a', args: { email: 'x@example.com', n: [1, 2.5] } },
      { name: 'b', arguments: '{ "email": "x@example.com" }' },
      { id: 'provider-id', name: 'c', arguments: 'not json' },
      { name: 'd', arguments: '[1]' },
    ]);
    // What the provider said of its reply is the transcript's, not history's.
    expect(kept).not.toHaveProperty('responseId');
    // Through history (JSON) and back, the run reads the answer the worker had, the provider's fields aside.
    const { finishReason: _f, responseId: _r, ...rest } = answer;
    expect(readTurn(JSON.parse(JSON.stringify(kept)) as ModelTurnResult, 2)).toEqual(rest);
    // A provider's own ids are kept, even where they look like the scripted model's.
    expect(recorded(answer, false, 2).message.toolCalls![0]).toMatchObject({ id: 'call_2_0' });
  });

  it('records a name once for calls in a row to the same tool, and restores it to each', () => {
    const names = ['crm__lookup_customer', 'crm__lookup_customer', 'tickets__read_ticket', 'crm__lookup_customer'];
    const answer = {
      message: {
        role: 'assistant' as const,
        content: '',
        toolCalls: names.map((name, i) => ({ id: `call_0_${i}`, name, arguments: `{"n":${i}}` })),
      },
      usage: { inputTokens: 1, outputTokens: 2 },
      transcript: 'sha256:ef',
    };
    const kept = recorded(answer, true, 0);
    expect(kept.message.toolCalls!.map((c) => c.name)).toEqual([
      'crm__lookup_customer',
      undefined,
      'tickets__read_ticket',
      'crm__lookup_customer',
    ]);
    expect(readTurn(JSON.parse(JSON.stringify(kept)) as ModelTurnResult, 0)).toEqual(answer);
  });

  it('reads a result recorded whole as it was', () => {
    const whole: ModelTurnResult = {
      message: { role: 'assistant', content: 'done' },
      usage: { inputTokens: 1, outputTokens: 1 },
      finishReason: 'stop',
      responseId: 'r1',
      transcript: 'sha256:cd',
    };
    expect(readTurn(whole, 0)).toEqual(whole);
  });
});
