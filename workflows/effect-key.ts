// Workflow-safe: the effect key names one call at one position in one run.
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
