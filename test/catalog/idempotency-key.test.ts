// The key a tool dedupes on is derived twice: by the worker (natively) for the tool, and by the workflow
// (pure JS) for the budget's reservation and by clients that look a call up. They must never differ.
import { idempotencyKey } from '../../common/effect-key';
import { workerIdempotencyKey } from '../../activities/idempotency-key';

describe("the worker's idempotency key", () => {
  it.each([
    ['agent-1f0c', 'ek-IUhzBDosRGueCstFfqtPZzeGL2k33QJGj3uX3LzZP8A'],
    ['agent-1f0c', 'ek-IUhzBDosRGueCstFfqtPZzeGL2k33QJGj3uX3LzZP8A.2'],
    ['mcp-session/ünïcødé/東京', 'ek-x'],
    ['emoji-😀', ''],
    ['lone-\ud800-surrogate', 'ek-\udfff'],
    ['', ''],
  ])('is the workflow’s for workflow %j and key %j', (workflowId, key) => {
    expect(workerIdempotencyKey(workflowId, key)).toBe(idempotencyKey(workflowId, key));
    expect(workerIdempotencyKey(workflowId, key)).toMatch(/^tp-[0-9a-f]{48}$/);
  });

  it('differs when either part differs', () => {
    const a = workerIdempotencyKey('w', 'ek-a');
    expect(workerIdempotencyKey('w', 'ek-b')).not.toBe(a);
    expect(workerIdempotencyKey('w2', 'ek-a')).not.toBe(a);
  });
});
