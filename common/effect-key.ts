// Workflow-safe, shared by workflows, activities and the client: how an effect is named.
// The effect key names one call at one position in one run; the activity id carries it.
import { canonicalJson, sha256Base64url, sha256Hex } from '../catalog/digest';

export interface EffectDescriptor {
  tool: string;
  args: unknown;
}

/**
 * SHA-256 over the canonical descriptor and the position, in base64url (`ek-` and 43 characters: it
 * is the activity id of every call, so it is written to history with each). The model's tool-call id
 * is not in it: the same call at the same point is the same effect whoever asked for it.
 */
export function effectKey(descriptor: EffectDescriptor, position: number): string {
  return `ek-${sha256Base64url(keyText(descriptor, position))}`;
}

/**
 * `canonicalJson({ descriptor, position })`. For the descriptor every call makes (a plain
 * `{ tool, args }` with object arguments and a finite position) it is written around the canonical
 * arguments directly, byte for byte what the whole would canonicalise to; anything else goes the
 * whole way.
 */
function keyText(descriptor: EffectDescriptor, position: number): string {
  const { tool, args } = descriptor;
  if (
    typeof tool === 'string' &&
    typeof args === 'object' &&
    args !== null &&
    Number.isFinite(position) &&
    Object.getPrototypeOf(descriptor) === Object.prototype &&
    isToolAndArgs(Object.keys(descriptor))
  )
    return `{"descriptor":{"args":${flatJson(args) ?? canonicalJson(args)},"tool":${JSON.stringify(tool)}},"position":${JSON.stringify(position)}}`;
  return canonicalJson({ descriptor, position });
}

/**
 * The canonical JSON of arguments whose values are all strings, finite numbers, booleans or null
 * (most calls' arguments), in one `JSON.stringify` told the sorted keys: it writes the members in
 * that order, each as JSON writes it, which is what RFC 8785 writes for such values. Undefined for
 * anything else, which `canonicalJson` writes.
 */
function flatJson(args: object): string | undefined {
  if (Array.isArray(args) || 'toJSON' in args) return undefined;
  const keys = Object.keys(args).sort();
  for (const k of keys) {
    const v = (args as Record<string, unknown>)[k];
    if (!(
      typeof v === 'string' ||
      (typeof v === 'number' && Number.isFinite(v)) ||
      typeof v === 'boolean' ||
      v === null
    ))
      return undefined;
  }
  return JSON.stringify(args, keys);
}

const isToolAndArgs = (keys: string[]): boolean => keys.length === 2 && keys.includes('tool') && keys.includes('args');

/** What the provider sees: stable across crashes, retries and a reset that replays to the same point. */
export function idempotencyKey(workflowId: string, key: string): string {
  return `tp-${sha256Hex(`${workflowId}\n${key}`).slice(0, 48)}`;
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
