// Node-only: the idempotency key a tool receives, hashed natively. The format is common/effect-key.ts's;
// the workflow derives the same key with a pure-JS SHA-256, which costs a cold worker far more per call.
import { createHash } from 'node:crypto';
import { idempotencyKey } from '../common/effect-key';

const sha256Hex = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

/** `idempotencyKey(workflowId, effectKey)`, byte for byte. */
export function workerIdempotencyKey(workflowId: string, effectKey: string): string {
  return idempotencyKey(workflowId, effectKey, sha256Hex);
}
