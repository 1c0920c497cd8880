// Workflow-safe, shared by workflows, activities and the client: how an effect is named.
// The effect key names one call at one position in one run; the activity id carries it.
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
/** The key text's UTF-8 and its padding are written here (at most 3 bytes a UTF-16 unit), not into a new array each call. */
let message = new Uint8Array(1024);

/** SHA-256's round constants (FIPS 180-4, 4.2.2) and initial hash value (5.3.3). */
const K = Int32Array.from(
  // prettier-ignore
  [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
  ],
);
const IV = Int32Array.from([
  0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
]);
/** The message schedule and the hash state, kept: nothing is made per key. */
const W = new Int32Array(64);
const H = new Int32Array(8);

/**
 * SHA-256 (FIPS 180-4) of `message[0, length)` into `H`, the padding written after it in place. The
 * library's hash made per call a view, a length as a BigInt and checks a key never needs; this is
 * the same function on 32-bit integers, its output pinned with the library's (test/gate/effect-key.test.ts).
 */
function sha256Into(length: number): void {
  const blocks = (length + 9 + 63) >> 6;
  const end = blocks << 6;
  if (end > message.length) {
    const larger = new Uint8Array(end * 2);
    larger.set(message.subarray(0, length));
    message = larger;
  }
  const m = message;
  m[length] = 0x80;
  m.fill(0, length + 1, end - 8);
  // The length in bits, as a 64-bit big-endian integer.
  const high = Math.floor(length / 0x20000000);
  const low = (length * 8) >>> 0;
  for (let i = 0; i < 4; i++) {
    m[end - 8 + i] = (high >>> (24 - 8 * i)) & 0xff;
    m[end - 4 + i] = (low >>> (24 - 8 * i)) & 0xff;
  }
  H.set(IV);
  for (let at = 0; at < end; at += 64) compress(m, at);
}

/** One 64-byte block at `at` into the hash state `H`. */
function compress(m: Uint8Array, at: number): void {
  for (let i = 0; i < 16; i++) {
    const j = at + 4 * i;
    W[i] = (m[j]! << 24) | (m[j + 1]! << 16) | (m[j + 2]! << 8) | m[j + 3]!;
  }
  for (let i = 16; i < 64; i++) {
    const x = W[i - 15]!;
    const y = W[i - 2]!;
    const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
    const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
    W[i] = (W[i - 16]! + s0 + W[i - 7]! + s1) | 0;
  }
  let a = H[0]!;
  let b = H[1]!;
  let c = H[2]!;
  let d = H[3]!;
  let e = H[4]!;
  let f = H[5]!;
  let g = H[6]!;
  let h = H[7]!;
  for (let i = 0; i < 64; i++) {
    const s1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
    const t1 = (h + s1 + ((e & f) ^ (~e & g)) + K[i]! + W[i]!) | 0;
    const s0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
    const t2 = (s0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
    h = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  H[0] = (H[0]! + a) | 0;
  H[1] = (H[1]! + b) | 0;
  H[2] = (H[2]! + c) | 0;
  H[3] = (H[3]! + d) | 0;
  H[4] = (H[4]! + e) | 0;
  H[5] = (H[5]! + f) | 0;
  H[6] = (H[6]! + g) | 0;
  H[7] = (H[7]! + h) | 0;
}

/** Byte `k` (0-31) of the digest in `H`, big-endian. */
const byteAt = (k: number): number => (H[k >> 2]! >>> (24 - 8 * (k & 3))) & 0xff;

/**
 * `sha256Base64url(text)`, byte for byte, at a fraction of its cost (the effect key is made for every
 * call, on every replay): the text is encoded into a buffer kept for it, the 32 bytes of the hash
 * written as 43 characters, 12 bits at a time.
 */
function keyHash(text: string): string {
  if (text.length * 3 + 72 > message.length) message = new Uint8Array(text.length * 3 + 72);
  const length = encoder.encodeInto(text, message).written;
  sha256Into(length);
  let out = '';
  for (let i = 0; i < 30; i += 3) {
    const x = (byteAt(i) << 16) | (byteAt(i + 1) << 8) | byteAt(i + 2);
    out += PAIRS[x >> 12]! + PAIRS[x & 4095]!;
  }
  // The last 2 bytes: 16 bits, 3 characters (the last one of 4 bits), unpadded.
  const x = (byteAt(30) << 16) | (byteAt(31) << 8);
  return out + PAIRS[x >> 12]! + BASE64URL[(x >> 6) & 63]!;
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

/** `ek-…`, `ek-….1` (a resend) and `ek-….reconcile.0` all name the effect `ek-…`. */
export function effectKeyOfActivityId(activityId: string): string {
  return activityId.split('.')[0]!;
}
