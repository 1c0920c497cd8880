// The worker's Ed25519 signing key, derived from its ticket key: what signs the worker's messages to a
// run whose validators must check them holding nothing secret (an MCP session's calls and end,
// common/session-proof.ts; a model attempt's stream tokens, common/stream-protocol.ts). The run knows
// the public half from a message only the worker writes (the session's pass, the run's opening); each
// message's fields begin with their own purpose, so a signature for one kind is never another's.
import { createHmac, createPrivateKey, createPublicKey, sign, type KeyObject } from 'node:crypto';
import { proofMessage } from '../../common/worker-signature';

/** The derivation's label: the key first signed the gateway's calls, and keeps its name so sessions' keys stay. */
const SEED_PURPOSE = 'toolplane-mcp-call-signing-key';

/** The Ed25519 key pair a ticket key derives; made once per key. */
export interface SigningKey {
  privateKey: KeyObject;
  publicKey: KeyObject;
  /** The raw public key, base64url (43 characters): what a run checks signatures with. */
  raw: string;
}

const signingKeys = new Map<string, SigningKey>();
/** PKCS #8 of an Ed25519 private key, up to its 32-byte seed. */
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

export function signingKey(key: Buffer): SigningKey {
  const id = createHmac('sha256', key).update('toolplane-signing-key-id').digest('base64url');
  let k = signingKeys.get(id);
  if (!k) {
    const seed = createHmac('sha256', key).update(SEED_PURPOSE).digest();
    const privateKey = createPrivateKey({
      key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]),
      format: 'der',
      type: 'pkcs8',
    });
    const publicKey = createPublicKey(privateKey);
    k = { privateKey, publicKey, raw: publicKey.export({ format: 'jwk' }).x! };
    if (signingKeys.size >= 64) signingKeys.clear();
    signingKeys.set(id, k);
  }
  return k;
}

/** The public key a run checks the worker's signatures with (base64url, raw 32 bytes). */
export function workerVerifyKey(key: Buffer): string {
  return signingKey(key).raw;
}

/** The worker's signature over `fields` (their canonical JSON), base64url. */
export function signFields(key: Buffer, fields: unknown[]): string {
  return sign(null, proofMessage(fields), signingKey(key).privateKey).toString('base64url');
}
