// Workflow-safe: what a call sends out of the plane, and to whom: its arguments as the provider
// receives them plus what it carries beside them, once to every destination it names.
import { canonicalJson, sizedCanonicalJson } from '../../catalog/digest';
import { destinationsOf } from '../../catalog/egress';
import type { ToolDecl } from '../../catalog/manifest';
import type { CanonicalArgs } from '../../common/effect-key';

export interface Outbound {
  /** Normalised destinations; each receives every byte. */
  destinations: string[];
  argumentBytes: number;
  carriedBytes: number;
}

/** The canonical JSON of the arguments, in UTF-8 bytes. */
export function argumentBytes(args: unknown): number {
  return utf8Length(canonicalJson(args));
}

const NON_ASCII = /[\u0080-\uffff]/;

/** The length of a string's UTF-8 encoding, as `TextEncoder` writes it (a lone surrogate becomes U+FFFD, 3 bytes). */
export function utf8Length(text: string): number {
  // Most arguments are ASCII: one byte a unit, found by one native scan.
  if (!NON_ASCII.test(text)) return text.length;
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n += 4;
        i++;
      } else n += 3;
    } else n += 3;
  }
  return n;
}

/** Throws when a destination cannot be read (the gate refuses). */
export function outboundOf(decl: ToolDecl, args: unknown, carriedBytes = 0): Outbound {
  return { destinations: destinationsOf(decl, args), argumentBytes: argumentBytes(args), carriedBytes };
}

/**
 * `outboundOf`, and the arguments' canonical JSON it counted, for the effect key to reuse (the
 * arguments are canonicalised once per call). Throws as `outboundOf` does, in the same order.
 */
export function outboundAndJson(
  decl: ToolDecl,
  args: Record<string, unknown>,
  carriedBytes: number,
): { outbound: Outbound; written: CanonicalArgs } {
  const destinations = destinationsOf(decl, args);
  const { json, ascii } = sizedCanonicalJson(args);
  return {
    outbound: { destinations, argumentBytes: ascii ? json.length : utf8Length(json), carriedBytes },
    written: { of: args, json },
  };
}

export function outboundBytes(o: Outbound): number {
  return o.argumentBytes + o.carriedBytes;
}
