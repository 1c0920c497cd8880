// Workflow-safe: RFC 8785 canonical JSON and SHA-256 (pure JS, no Node crypto).
import canonicalize from 'canonicalize';
import { sha256 } from '@noble/hashes/sha256';
import { bytesToHex } from '@noble/hashes/utils';
import type { Manifest, ToolDecl } from './manifest';

export function canonicalJson(value: unknown): string {
  const flat = flatCanonicalJson(value);
  if (flat !== undefined) return flat;
  const text = canonicalize(value);
  if (text === undefined) throw new TypeError('value has no JSON form');
  return text;
}

/** Canonical JSON, and whether every character of it is known to be ASCII (then its UTF-8 length is its length). */
export interface SizedCanonicalJson {
  json: string;
  ascii: boolean;
}

/**
 * `canonicalJson(value)`, and whether it is all ASCII, as its writing found (a flat object's keys and
 * values are scanned for escapes already): a call's egress bytes are counted without a second scan.
 * `ascii` is false whenever the text was written the general way, whatever it holds.
 */
export function sizedCanonicalJson(value: unknown): SizedCanonicalJson {
  const sized: SizedCanonicalJson = { json: '', ascii: true };
  const flat = flatCanonicalJson(value, sized);
  if (flat !== undefined) sized.json = flat;
  else {
    sized.json = canonicalJson(value);
    sized.ascii = false;
  }
  return sized;
}

/**
 * What `canonicalize` writes for a plain object whose values are all strings, finite numbers,
 * booleans or null (most tool arguments), without its general recursion; undefined for anything
 * else, which the library then writes. Every call's arguments come here (egress bytes, effect key).
 */
function flatCanonicalJson(value: unknown, sized?: SizedCanonicalJson): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || 'toJSON' in value) return undefined;
  const o = value as Record<string, unknown>;
  const keys = sortedKeys(Object.keys(o));
  let text = '{';
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    const v = o[k];
    let written: string;
    if (typeof v === 'string') written = jsonString(v, sized);
    else if (typeof v === 'number') {
      if (!Number.isFinite(v)) return undefined;
      // What JSON.stringify writes for a finite number: its ToString (-0 is "0").
      written = String(v);
    } else if (typeof v === 'boolean') written = v ? 'true' : 'false';
    else if (v === null) written = 'null';
    else return undefined;
    text += (i === 0 ? '' : ',') + jsonString(k, sized) + ':' + written;
  }
  return `${text}}`;
}

/**
 * `JSON.stringify(text)`: quoted as it stands when nothing in it is escaped (most keys and values).
 * A character outside ASCII (or one escaped) clears `sized.ascii` (state of the caller's, not of this
 * module: every bundle shares this module across its workflows).
 */
function jsonString(text: string, sized?: SizedCanonicalJson): string {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    // What JSON.stringify escapes: a control character, a quote, a backslash, a lone surrogate (any surrogate goes its way).
    if (c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) {
      if (sized) sized.ascii = false;
      return JSON.stringify(text);
    }
    if (c >= 0x80 && sized) sized.ascii = false;
  }
  return `"${text}"`;
}

/**
 * The keys in the order `canonicalize` writes them (`Array.prototype.sort`'s default, by UTF-16 code
 * units, which `<` compares too), sorted in place by insertion: arguments have a handful of keys,
 * for which this is a few times cheaper than the general sort.
 */
function sortedKeys(keys: string[]): string[] {
  if (keys.length > 16) return keys.sort();
  for (let i = 1; i < keys.length; i++) {
    const k = keys[i]!;
    let j = i - 1;
    while (j >= 0 && keys[j]! > k) {
      keys[j + 1] = keys[j]!;
      j--;
    }
    keys[j + 1] = k;
  }
  return keys;
}

export function sha256Hex(text: string): string {
  return bytesToHex(sha256(utf8(text)));
}

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** All 256 bits of the SHA-256 in 43 base64url characters (hex takes 64): same collision bound, a third shorter. */
export function sha256Base64url(text: string): string {
  const bytes = sha256(utf8(text));
  let out = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    const chars = i + 1 >= bytes.length ? 2 : i + 2 >= bytes.length ? 3 : 4;
    for (let c = 0; c < chars; c++) out += BASE64URL[(n >> (18 - 6 * c)) & 63];
  }
  return out;
}

let encoder: { encode(text: string): Uint8Array } | undefined;
/** UTF-8 bytes, exactly as `utf8ToBytes` makes them, through one encoder instead of one per hash. */
function utf8(text: string): Uint8Array {
  return (encoder ??= new TextEncoder()).encode(text);
}

export function digestOf(value: unknown): string {
  return `sha256:${sha256Hex(canonicalJson(value))}`;
}

/** Over the whole parsed declaration: description, full schema, annotations, safety and rules. */
export function toolDigest(decl: ToolDecl): string {
  return digestOf(decl);
}

export function manifestDigest(manifest: Manifest): string {
  return digestOf({
    version: manifest.version,
    servers: manifest.servers,
    tools: Object.fromEntries(manifest.tools.map((t) => [t.id, toolDigest(t)])),
    // Absent sections stay out, so a manifest without them keeps its digest.
    ...(manifest.principals ? { principals: manifest.principals } : {}),
    ...(manifest.models ? { models: manifest.models } : {}),
    ...(manifest.limits ? { limits: manifest.limits } : {}),
  });
}

/** 48 bits of a tool digest: enough to tell one deployment's declarations apart, short enough to send with every call. */
export function shortDigest(digest: string): string {
  return digest.replace(/^sha256:/, '').slice(0, 12);
}
