// Workflow-safe: Ed25519 signature verification (RFC 8032, section 5.1.7), pure JS with BigInt and
// @noble/hashes' SHA-512, for a check that must run where no key may be held and Node's crypto is
// absent: an update validator. Only verification lives here; the worker signs with Node's crypto.
// Strict where it matters to a forger: S must be below the group order, A must decode to a point,
// and R is compared byte for byte with the encoding of [S]B - [k]A (the cofactorless equation).
import { sha512 } from '@noble/hashes/sha512';

const P = 2n ** 255n - 19n;
/** The order of the base point. */
const L = 2n ** 252n + 27742317777372353535851937790883648493n;

const mod = (a: bigint): bigint => {
  const r = a % P;
  return r >= 0n ? r : r + P;
};

function pow(base: bigint, exp: bigint): bigint {
  let result = 1n;
  let b = mod(base);
  let e = exp;
  while (e > 0n) {
    if (e & 1n) result = (result * b) % P;
    b = (b * b) % P;
    e >>= 1n;
  }
  return result;
}

const inv = (a: bigint): bigint => pow(a, P - 2n);

/** The curve constant d = -121665 / 121666, and 2d as the addition uses it. */
const D = mod(-121665n * inv(121666n));
const D2 = mod(2n * D);
/** A square root of -1 mod p: 2^((p-1)/4). */
const SQRT_M1 = pow(2n, (P - 1n) / 4n);

/** A point in extended coordinates: x = X/Z, y = Y/Z, xy = T/Z. */
interface Point {
  X: bigint;
  Y: bigint;
  Z: bigint;
  T: bigint;
}

const ZERO: Point = { X: 0n, Y: 1n, Z: 1n, T: 0n };

/** The unified addition of twisted Edwards curves with a = -1 (add-2008-hwcd-3); also doubles. */
function add(p: Point, q: Point): Point {
  const a = mod((p.Y - p.X) * (q.Y - q.X));
  const b = mod((p.Y + p.X) * (q.Y + q.X));
  const c = mod(p.T * D2 * q.T);
  const d = mod(p.Z * 2n * q.Z);
  const e = b - a;
  const f = d - c;
  const g = d + c;
  const h = b + a;
  return { X: mod(e * f), Y: mod(g * h), T: mod(e * h), Z: mod(f * g) };
}

const negate = (p: Point): Point => ({ X: mod(-p.X), Y: p.Y, Z: p.Z, T: mod(-p.T) });

/** Little-endian bytes as an integer. */
function leInt(bytes: Uint8Array): bigint {
  let n = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(bytes[i]!);
  return n;
}

/** Decodes a 32-byte point encoding, or undefined when it is none (RFC 8032, 5.1.3). */
function decode(bytes: Uint8Array): Point | undefined {
  if (bytes.length !== 32) return undefined;
  const n = leInt(bytes);
  const sign = n >> 255n;
  const y = n & (2n ** 255n - 1n);
  if (y >= P) return undefined;
  const y2 = (y * y) % P;
  const u = mod(y2 - 1n);
  const v = mod(D * y2 + 1n);
  const v3 = (v * v * v) % P;
  let x = mod(u * v3 * pow(u * v3 * v3 * v, (P - 5n) / 8n));
  const vx2 = mod(v * x * x);
  if (vx2 === u) {
    // x is a root
  } else if (vx2 === mod(-u)) x = mod(x * SQRT_M1);
  else return undefined;
  if (x === 0n && sign === 1n) return undefined;
  if ((x & 1n) !== sign) x = P - x;
  return { X: x, Y: y, Z: 1n, T: mod(x * y) };
}

function encode(p: Point): Uint8Array {
  const zi = inv(p.Z);
  const x = mod(p.X * zi);
  let n = mod(p.Y * zi) | ((x & 1n) << 255n);
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) {
    out[i] = Number(n & 0xffn);
    n >>= 8n;
  }
  return out;
}

const BASE = decode(
  // y = 4/5, x even: the standard base point's encoding.
  Uint8Array.from([
    0x58, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66,
    0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66,
  ]),
)!;

/** [a]P + [b]Q in one pass of doublings (Straus). */
function doubleScalar(a: bigint, p: Point, b: bigint, q: Point): Point {
  const pq = add(p, q);
  let r = ZERO;
  const bits = Math.max(a.toString(2).length, b.toString(2).length);
  for (let i = bits - 1; i >= 0; i--) {
    r = add(r, r);
    const ai = (a >> BigInt(i)) & 1n;
    const bi = (b >> BigInt(i)) & 1n;
    if (ai && bi) r = add(r, pq);
    else if (ai) r = add(r, p);
    else if (bi) r = add(r, q);
  }
  return r;
}

function fromBase64url(text: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return undefined;
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const out: number[] = [];
  let bits = 0;
  let value = 0;
  for (const ch of text) {
    value = (value << 6) | alphabet.indexOf(ch);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push((value >> bits) & 0xff);
    }
  }
  return Uint8Array.from(out);
}

/**
 * Did the holder of the private key of `publicKey` (32 bytes, base64url) sign `message` with
 * `signature` (64 bytes, base64url)? Never throws: anything malformed is `false`.
 */
export function ed25519Verify(publicKey: string, message: Uint8Array, signature: string): boolean {
  if (typeof publicKey !== 'string' || typeof signature !== 'string') return false;
  const a = fromBase64url(publicKey);
  const sig = fromBase64url(signature);
  if (!a || a.length !== 32 || !sig || sig.length !== 64) return false;
  const A = decode(a);
  if (!A) return false;
  const rBytes = sig.subarray(0, 32);
  const s = leInt(sig.subarray(32));
  if (s >= L) return false;
  const h = new Uint8Array(64 + message.length);
  h.set(rBytes, 0);
  h.set(a, 32);
  h.set(message, 64);
  const k = leInt(sha512(h)) % L;
  const r = encode(doubleScalar(s, BASE, k, negate(A)));
  let diff = 0;
  for (let i = 0; i < 32; i++) diff |= r[i]! ^ rBytes[i]!;
  return diff === 0;
}
