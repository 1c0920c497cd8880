// The conversation of a run, kept by the worker outside history: each model turn stores one
// segment (what was new, and the model's reply) in the run's blob store and hands the workflow
// its reference. A turn's input then carries that reference plus only what is new, so history
// grows with each turn's own content, not with the whole conversation.
import { ErrorCode } from '../../catalog/error-codes';
import { ToolplaneError } from '../../catalog/errors';
import type { OfferedTool } from '../../catalog/tool-catalog';
import { blobRef, namesByContent, type BlobStore } from '../blob-store';
import type { ChatMessage, ModelTurnAnswer, ScriptTurn } from '../../common/wire';

/** What stays fixed for a run's conversation: the tools offered and, for a scripted model, its script. */
export interface TranscriptContext {
  v: 1;
  kind: 'context';
  tools: OfferedTool[];
  toolsDigest: string;
  script?: ScriptTurn[];
}

/** One turn's part of the conversation. Counts are of the whole conversation up to its end. */
export interface TranscriptSegment {
  v: 1;
  kind: 'segment';
  context: string;
  prev?: string;
  /** Model replies so far, this one included. */
  turns: number;
  /** JSON characters of every message so far: a size estimate that needs no expansion. */
  chars: number;
  messages: ChatMessage[];
  /** What the provider reported of this turn's reply (its model, response id, why it stopped), when it did. */
  response?: Pick<ModelTurnAnswer, 'responseModel' | 'responseId' | 'finishReason'>;
}

export class TranscriptUnavailable extends ToolplaneError<typeof ErrorCode.TranscriptUnavailable, { ref: string }> {
  constructor(ref: string, why: string) {
    super(ErrorCode.TranscriptUnavailable, `the run's conversation ${ref} cannot be read: ${why}`, { ref });
  }
}

const CACHE_LIMIT = 256;

/**
 * Reads and writes a run's transcript. A worker keeps recent segments and expansions in memory,
 * so consecutive turns of a run cost one write and no reads; another worker reads them back.
 */
export class TranscriptStore {
  private readonly cache = new Map<string, TranscriptContext | TranscriptSegment>();
  private readonly expanded = new Map<string, ChatMessage[]>();

  constructor(private readonly blobs: BlobStore) {}

  private remember<T>(map: Map<string, T>, key: string, value: T): void {
    map.delete(key);
    map.set(key, value);
    if (map.size > CACHE_LIMIT) map.delete(map.keys().next().value!);
  }

  private async read(ref: string, scope: string): Promise<TranscriptContext | TranscriptSegment> {
    const key = `${scope}\n${ref}`;
    const hit = this.cache.get(key);
    if (hit) return hit;
    let value: TranscriptContext | TranscriptSegment;
    try {
      value = JSON.parse((await this.blobs.get(ref, scope)).toString('utf8'));
    } catch (err) {
      throw new TranscriptUnavailable(ref, (err as Error).message);
    }
    if (value?.v !== 1) throw new TranscriptUnavailable(ref, 'it is not a transcript this worker wrote');
    this.remember(this.cache, key, value);
    return value;
  }

  private async write(value: TranscriptContext | TranscriptSegment, scope: string): Promise<string> {
    const ref = await this.blobs.put(Buffer.from(JSON.stringify(value)), scope);
    this.remember(this.cache, `${scope}\n${ref}`, value);
    return ref;
  }

  async context(ref: string, scope: string): Promise<TranscriptContext> {
    const v = await this.read(ref, scope);
    if (v.kind !== 'context') throw new TranscriptUnavailable(ref, 'it is not a conversation context');
    return v;
  }

  async segment(ref: string, scope: string): Promise<TranscriptSegment> {
    const v = await this.read(ref, scope);
    if (v.kind !== 'segment') throw new TranscriptUnavailable(ref, 'it is not a conversation segment');
    return v;
  }

  /**
   * Stores a run's context. In toolplane's own stores, which name a blob by its content (`blobRef`),
   * the reference is there at once and `stored` ends when the context is stored: the first turn's
   * segment is written meanwhile, not after. Another store is awaited for the name it gives.
   */
  async startContext(
    context: Omit<TranscriptContext, 'v' | 'kind'>,
    scope: string,
  ): Promise<{ ref: string; context: TranscriptContext; stored: Promise<unknown> }> {
    const value: TranscriptContext = { v: 1, kind: 'context', ...context };
    if (!namesByContent(this.blobs)) {
      const ref = await this.write(value, scope);
      return { ref, context: value, stored: Promise.resolve() };
    }
    const bytes = Buffer.from(JSON.stringify(value));
    const ref = blobRef(bytes);
    this.remember(this.cache, `${scope}\n${ref}`, value);
    const stored = this.blobs.put(bytes, scope);
    // Awaited with the turn's segment; a turn that fails before then leaves no unhandled rejection.
    stored.catch(() => {});
    return { ref, context: value, stored };
  }

  async append(segment: Omit<TranscriptSegment, 'v' | 'kind'>, scope: string): Promise<string> {
    return this.write({ v: 1, kind: 'segment', ...segment }, scope);
  }

  /** Every message of the conversation up to and including segment `ref`, oldest first. */
  async messages(ref: string, scope: string): Promise<ChatMessage[]> {
    const chain: TranscriptSegment[] = [];
    let base: ChatMessage[] = [];
    for (let at: string | undefined = ref; at;) {
      const known = this.expanded.get(`${scope}\n${at}`);
      if (known) {
        base = known;
        break;
      }
      const s = await this.segment(at, scope);
      chain.push(s);
      at = s.prev;
    }
    const all = base.concat(...chain.reverse().map((s) => s.messages));
    this.remember(this.expanded, `${scope}\n${ref}`, all);
    return all;
  }
}
