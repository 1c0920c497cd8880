// Workflow-safe: an MCP session's call memo. Each call key gets one outcome: a repeat answers it (or
// waits for it while the call is in flight), the same key for another tool or other arguments is
// refused, and the last keys are carried across continue-as-new with their outcomes.
import { canonicalJson, sha256Hex } from '../../catalog/digest';
import { ErrorCode } from '../../catalog/error-codes';
import type { McpCallOutcome, McpCallRequest, McpMemoEntry } from '../../common/gateway-protocol';

/** Keys carried with their outcomes. */
export const MEMO_KEYS = 1000;
/** Older keys carried by digest only, so a repeat of one is refused rather than sent again. */
const FORGOTTEN_KEYS = 20_000;

/** One key's call in this run. */
export interface MemoSlot {
  entry: McpMemoEntry;
  /** The call's position in the run (fixed when its key was first seen); absent for a carried key. */
  position?: number;
}

export type MemoLookup =
  { kind: 'new' } | { kind: 'known'; slot: MemoSlot } | { kind: 'answered'; outcome: McpCallOutcome };

const keyDigest = (key: string) => sha256Hex(key).slice(0, 24);

/** What a call does, as a keyless repeat is matched: its tool and its canonical arguments' digest. */
const sameCallKey = (toolId: string, argsDigest: string) => `${toolId}\n${argsDigest}`;

export class CallMemo {
  private readonly slots = new Map<string, MemoSlot>();
  private readonly forgotten: Set<string>;
  /** The latest call that was sent for each tool and arguments (a repeat answered with another's outcome is not). */
  private readonly latest = new Map<string, MemoSlot>();

  constructor(carried?: { memo: McpMemoEntry[]; forgotten: string[] }) {
    for (const entry of carried?.memo ?? []) this.remember({ entry });
    this.forgotten = new Set(carried?.forgotten ?? []);
  }

  private remember(slot: MemoSlot): void {
    this.slots.set(slot.entry.key, slot);
    if (slot.entry.sameAs === undefined) this.latest.set(sameCallKey(slot.entry.toolId, slot.entry.argsDigest), slot);
  }

  /** The latest call of this session that was sent with this tool and these arguments. */
  latestSame(toolId: string, argsDigest: string): MemoSlot | undefined {
    return this.latest.get(sameCallKey(toolId, argsDigest));
  }

  static argsDigest(args: unknown): string {
    return sha256Hex(canonicalJson(args ?? null));
  }

  /** What the memo knows of `req`'s key. */
  lookup(req: McpCallRequest): MemoLookup {
    const slot = this.slots.get(req.key);
    if (!slot) {
      if (!this.forgotten.has(keyDigest(req.key))) return { kind: 'new' };
      const reason = `the call under key ${req.key} is too old to repeat in this session: read its outcome with \`toolplane show\``;
      return { kind: 'answered', outcome: { status: 'refused', code: ErrorCode.KeyForgotten, reason } };
    }
    if (slot.entry.toolId !== req.toolId || slot.entry.argsDigest !== CallMemo.argsDigest(req.args)) {
      const reason = `key ${req.key} was already used in this session for ${slot.entry.toolId === req.toolId ? 'other arguments' : slot.entry.toolId}; a repeated call must send the same tool and arguments, a new call a new key`;
      return { kind: 'answered', outcome: { status: 'refused', code: ErrorCode.KeyReused, reason } };
    }
    return { kind: 'known', slot };
  }

  /** Records a new key at its position. */
  open(req: McpCallRequest, position: number): MemoSlot {
    const slot: MemoSlot = {
      entry: { key: req.key, toolId: req.toolId, argsDigest: CallMemo.argsDigest(req.args) },
      position,
    };
    this.remember(slot);
    return slot;
  }

  /** Records a new key whose request repeats `first` (answered with its outcome, sent nothing). */
  openRepeat(req: McpCallRequest, first: MemoSlot): MemoSlot {
    const slot: MemoSlot = {
      entry: { key: req.key, toolId: req.toolId, argsDigest: first.entry.argsDigest, sameAs: first.entry.key },
      ...(first.position !== undefined ? { position: first.position } : {}),
    };
    this.remember(slot);
    return slot;
  }

  /** The calls still without an outcome. */
  unsettled(): MemoSlot[] {
    return [...this.slots.values()].filter((s) => s.entry.outcome === undefined);
  }

  /** What the run that continues this one carries: the last keys with outcomes, and older keys by digest. */
  state(): { memo: McpMemoEntry[]; forgotten: string[] } {
    const entries = [...this.slots.values()].map((s) => s.entry).filter((e) => e.outcome !== undefined);
    const kept = entries.slice(-MEMO_KEYS);
    const dropped = entries.slice(0, entries.length - kept.length).map((e) => keyDigest(e.key));
    const forgotten = [...this.forgotten, ...dropped].slice(-FORGOTTEN_KEYS);
    return { memo: kept, forgotten };
  }
}
