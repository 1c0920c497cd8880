// Workflow-safe: how a run checks that a message is the worker's own, holding nothing secret. The
// worker signs a message's fields (activities/identity/signing-key.ts) with the Ed25519 key its ticket
// key derives; the run knows the public half from what only the worker writes (an MCP session's pass,
// a run's opening). The fields are a list that starts with the message's purpose and the workflow it
// is sent to, then its arguments (common/session-proof.ts, common/stream-protocol.ts): a signature for
// one message, workflow or argument list is no other's. Reading a signature from history helps no
// forger, and a validator can check it before the message enters history.
import { canonicalJson } from '../catalog/digest';
import { ed25519Verify } from './ed25519';

const encoder = new TextEncoder();

/** The bytes a signature is made over: the fields' canonical JSON. */
export const proofMessage = (fields: unknown[]): Uint8Array => encoder.encode(canonicalJson(fields));

/** Did the worker whose public key is `key` (base64url) sign `fields` with `sig`? False for anything unreadable. */
export function signedByWorker(key: string | undefined, fields: unknown[], sig: unknown): boolean {
  if (key === undefined || typeof sig !== 'string') return false;
  try {
    return ed25519Verify(key, proofMessage(fields), sig);
  } catch {
    return false;
  }
}
