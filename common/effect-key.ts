// Workflow-safe, shared by workflows, activities and the client: how an effect is named.
// The effect key names one call at one position in one run; the activity id carries it.
import { sha256 } from '@noble/hashes/sha256';
import { canonicalJson, sha256Hex } from '../catalog/digest';

export interface EffectDescriptor {
  tool: string;
  args: unknown;
}

/**
 * The canonical JSON of one arguments object, already written (the gate writes it to count the
 * call's egress bytes): the key reuses it for exactly that object, so a call's arguments are
 * canonicalised once.
 */
export interface CanonicalArgs {
  of: unknown;
  json: string;
}

/**
 * SHA-256 over the canonical descriptor and the position, in base64url (`ek-` and 43 characters: it
 * is the activity id of every call, so it is written to history with each). The model's tool-call id
 * is not in it: the same call at the same point is the same effect whoever asked for it.
 */
export function effectKey(descriptor: EffectDescriptor, position: number, written?: CanonicalArgs): string {
  return `ek-${keyHash(keyText(descriptor, position, written))}`;
}

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
/** Every 12 bits as their two base64url characters: one lookup where there were two. */
const PAIRS = Array.from({ length: 4096 }, (_, n) => BASE64URL[n >> 6]! + BASE64URL[n & 63]!);
const encoder = new TextEncoder();
/** The key text's UTF-8 is written here (at most 3 bytes a UTF-16 unit), not into a new array each call. */
let utf8 = new Uint8Array(1024);
/**
 * One SHA-256 instance reused for every key, reset from a pristine one (`_cloneInto`, the library's
 * way to reuse an instance), its digest written into a kept array: no hasher, view or output array is
 * made per call. Nothing awaits between reset and digest, so no other key can interleave.
 */
const PRISTINE = sha256.create();
const hasher = sha256.create();
const digest = new Uint8Array(32);

/**
 * `sha256Base64url(text)`, byte for byte, at a third less of its cost (the effect key is made for every
 * call, on every replay): the text is encoded into a buffer kept for it, the 32 bytes of the hash are
 * written as 43 characters, 12 bits at a time.
 */
function keyHash(text: string): string {
  if (text.length * 3 > utf8.length) utf8 = new Uint8Array(text.length * 3);
  const { written } = encoder.encodeInto(text, utf8);
  PRISTINE._cloneInto(hasher);
  hasher.update(utf8.subarray(0, written)).digestInto(digest);
  const h = digest;
  let out = '';
  for (let i = 0; i < 30; i += 3) {
    const n = (h[i]! << 16) | (h[i + 1]! << 8) | h[i + 2]!;
    out += PAIRS[n >> 12]! + PAIRS[n & 4095]!;
  }
  // The last 2 bytes: 16 bits, 3 characters (the last one of 4 bits), unpadded.
  const n = (h[30]! << 16) | (h[31]! << 8);
  return out + PAIRS[n >> 12]! + BASE64URL[(n >> 6) & 63]!;
}

/**
 * `canonicalJson({ descriptor, position })`. For the descriptor every call makes (a plain
 * `{ tool, args }` with object arguments and a finite position) it is written around the canonical
 * arguments directly (`written`, when it is of these very arguments), byte for byte what the whole
 * would canonicalise to; anything else goes the whole way.
 */
function keyText(descriptor: EffectDescriptor, position: number, written?: CanonicalArgs): string {
  const { tool, args } = descriptor;
  if (
    typeof tool === 'string' &&
    typeof args === 'object' &&
    args !== null &&
    Number.isFinite(position) &&
    Object.getPrototypeOf(descriptor) === Object.prototype &&
    isToolAndArgs(Object.keys(descriptor))
  )
    return `{"descriptor":{"args":${written?.of === args ? written.json : canonicalJson(args)},"tool":${JSON.stringify(tool)}},"position":${JSON.stringify(position)}}`;
  return canonicalJson({ descriptor, position });
}

const isToolAndArgs = (keys: string[]): boolean => keys.length === 2 && keys.includes('tool') && keys.includes('args');

/** What the provider sees: stable across crashes, retries and a reset that replays to the same point. */
export function idempotencyKey(workflowId: string, key: string, hex: (text: string) => string = sha256Hex): string {
  return `tp-${hex(`${workflowId}\n${key}`).slice(0, 48)}`;
}

/** The first send is the effect key itself; a resend adds `.N`. */
export function performActivityId(key: string, resend: number): string {
  return resend === 0 ? key : `${key}.${resend}`;
}

export function reconcileActivityId(key: string, round: number): string {
  return `${key}.reconcile.${round}`;
}

/** Which send of its call a perform activity is: 0 for `ek-…`, n for `ek-….n`. */
export function sendIndexOfActivityId(activityId: string): number {
  const dot = activityId.indexOf('.');
  if (dot < 0) return 0;
  const n = Number(activityId.slice(dot + 1));
  return Number.isInteger(n) && n > 0 ? n : 0;
}

/** `ek-…`, `ek-….1` (a resend) and `ek-….reconcile.0` all name the effect `ek-…`. */
export function effectKeyOfActivityId(activityId: string): string {
  return activityId.split('.')[0]!;
}
