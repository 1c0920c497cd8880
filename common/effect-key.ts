// Workflow-safe, shared by workflows, activities and the client: how an effect is named.
// The effect key names one call at one position in one run; the activity id carries it.
import { canonicalJson, sha256Hex } from '../catalog/digest';

export interface EffectDescriptor {
  tool: string;
  args: unknown;
}

/**
 * SHA-256 over the canonical descriptor and the position. The model's tool-call id is not in it:
 * the same call at the same point is the same effect whoever asked for it.
 */
export function effectKey(descriptor: EffectDescriptor, position: number): string {
  return `ek-${sha256Hex(canonicalJson({ descriptor, position }))}`;
}

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
