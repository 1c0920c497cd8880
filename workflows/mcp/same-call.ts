// Workflow-safe: exactly once for an MCP client that sends no idempotency key. Such a call is keyed by
// its JSON-RPC request id, which a client re-issuing a call after a dropped stream changes (MCP
// 2026-07-28 requires a new id). So a keyless call is also matched by what it does: the same tool and
// the same canonical arguments as an earlier call of the session, while that one is in flight or within
// the tool's `keyless_repeat_window` after it ended, is answered that call's outcome and sends nothing.
// The decision is made here, in the session's run, from its memo and workflow time: it survives a
// gateway restart, a worker restart and continue-as-new (the memo carries `settledAt`), and replays.
import { condition, patched } from '@temporalio/workflow';
import { durationMs } from '../../catalog/duration';
import type { ToolDecl } from '../../catalog/manifest';
import { KEYLESS_KEY_PREFIX, type McpCallRequest } from '../../common/gateway-protocol';
import { Patch } from '../../common/names';
import { CallMemo, type MemoSlot } from './call-memo';

/** A mutating tool's window when its declaration names none: ten minutes. */
export const DEFAULT_KEYLESS_REPEAT_WINDOW_MS = 10 * 60_000;

/**
 * How long after a call ended a keyless repeat of it is answered its outcome: the declared
 * `keyless_repeat_window`, else ten minutes for a mutating tool and 0 (never) for a read-only or
 * idempotent one, whose repeat changes nothing more and should read the world afresh.
 */
export function keylessRepeatWindowMs(decl: Pick<ToolDecl, 'safety' | 'keyless_repeat_window'> | undefined): number {
  if (!decl) return 0;
  if (decl.keyless_repeat_window !== undefined) return durationMs(decl.keyless_repeat_window);
  return decl.safety === 'mutating' ? DEFAULT_KEYLESS_REPEAT_WINDOW_MS : 0;
}

/**
 * The earlier call that `req` repeats, or `undefined` when `req` is to be sent. Only a keyless request
 * repeats (a key the client chose says which call it means, so a new key is a deliberate new call). The
 * earlier call may be keyed or not; one that was refused sent nothing, so a repeat of it is judged afresh.
 */
export function repeatedCall(
  memo: CallMemo,
  req: McpCallRequest,
  decl: Pick<ToolDecl, 'safety' | 'keyless_repeat_window'> | undefined,
  now: number,
): MemoSlot | undefined {
  if (!req.key.startsWith(KEYLESS_KEY_PREFIX)) return undefined;
  const windowMs = keylessRepeatWindowMs(decl);
  if (windowMs <= 0) return undefined;
  const first = memo.latestSame(req.toolId, CallMemo.argsDigest(req.args));
  if (!first) return undefined;
  const outcome = first.entry.outcome;
  if (outcome?.status === 'refused') return undefined;
  if (outcome !== undefined && (first.entry.settledAt === undefined || now - first.entry.settledAt > windowMs))
    return undefined;
  // Histories written before this rule sent such a repeat: they replay as they ran.
  return patched(Patch.KeylessRepeatAnswered) ? first : undefined;
}

/** Opens `req`'s slot as a repeat of `first`: it settles with `first`'s outcome, naming `first`'s key. */
export function answerAsRepeat(memo: CallMemo, req: McpCallRequest, first: MemoSlot): MemoSlot {
  const slot = memo.openRepeat(req, first);
  void condition(() => first.entry.outcome !== undefined).then(() => {
    const outcome = first.entry.outcome!;
    slot.entry.outcome = { ...outcome, sameCallAs: first.entry.key };
    if (first.entry.settledAt !== undefined) slot.entry.settledAt = first.entry.settledAt;
    if (outcome.effectKey) slot.entry.effectKey = outcome.effectKey;
  });
  return slot;
}
