// Workflow-safe: what a call sends out of the plane, and to whom: its arguments as the provider
// receives them plus what it carries beside them, once to every destination it names.
import { canonicalJson } from '../catalog/digest';
import { destinationsOf } from '../catalog/egress';
import type { ToolDecl } from '../catalog/manifest';

export interface Outbound {
  /** Normalised destinations; each receives every byte. */
  destinations: string[];
  argumentBytes: number;
  carriedBytes: number;
}

/** The canonical JSON of the arguments, in UTF-8 bytes. */
export function argumentBytes(args: unknown): number {
  return new TextEncoder().encode(canonicalJson(args)).length;
}

/** Throws when a destination cannot be read (the gate refuses). */
export function outboundOf(decl: ToolDecl, args: unknown, carriedBytes = 0): Outbound {
  return { destinations: destinationsOf(decl, args), argumentBytes: argumentBytes(args), carriedBytes };
}

export function outboundBytes(o: Outbound): number {
  return o.argumentBytes + o.carriedBytes;
}
