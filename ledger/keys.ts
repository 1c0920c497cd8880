// Ed25519 keys of the ledger: the worker signs with one key (by id); verifiers need only public keys,
// so keys can rotate and old references keep verifying while their public key is kept.
import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import fs from 'node:fs';
import { z } from 'zod';
import { ErrorCode } from '../catalog/error-codes';
import { ToolplaneError } from '../catalog/errors';
import type { LedgerRef, UnsignedLedgerRef } from '../common/ledger-ref';
import { signedBytes } from './ref';

export class LedgerKeyInvalid extends ToolplaneError<typeof ErrorCode.LedgerKeyInvalid, { where: string }> {
  constructor(where: string, problem: string) {
    super(ErrorCode.LedgerKeyInvalid, `${where}: ${problem}`, { where });
  }
}

/** Public keys by key id, PEM (SPKI). */
export type LedgerPublicKeys = Record<string, string>;

/**
 * The worker's ledger configuration: the key it signs with, and the public keys it accepts when a
 * tool cites an earlier reference (its own public key is always accepted).
 */
export interface LedgerConfig {
  keyId: string;
  /** Ed25519 private key, PEM (PKCS#8). */
  privateKey: string;
  /** Earlier (rotated-out) or other workers' public keys, by key id. */
  publicKeys?: LedgerPublicKeys;
}

const KeyFile = z
  .object({
    keyId: z.string().min(1).optional(),
    privateKey: z.string().min(1).optional(),
    publicKeys: z.record(z.string(), z.string().min(1)).optional(),
  })
  .strict();

/**
 * Reads a ledger key file: `{ "keyId", "privateKey", "publicKeys": { kid: pem } }`. A verifier's file
 * holds only `publicKeys`.
 */
export function loadLedgerKeyFile(file: string): { signing?: LedgerConfig; publicKeys: LedgerPublicKeys } {
  let parsed: z.infer<typeof KeyFile>;
  try {
    parsed = KeyFile.parse(JSON.parse(fs.readFileSync(file, 'utf8')));
  } catch (err) {
    throw new LedgerKeyInvalid(file, `not a ledger key file (${(err as Error).message.split('\n')[0]})`);
  }
  if (!!parsed.keyId !== !!parsed.privateKey)
    throw new LedgerKeyInvalid(file, 'keyId and privateKey go together: give both or neither');
  const signing = parsed.keyId
    ? { keyId: parsed.keyId, privateKey: parsed.privateKey!, publicKeys: parsed.publicKeys }
    : undefined;
  const publicKeys = signing ? publicKeysOf(signing) : { ...(parsed.publicKeys ?? {}) };
  for (const [kid, pem] of Object.entries(publicKeys)) publicKeyObject(kid, pem, file);
  return { signing, publicKeys };
}

/** A fresh Ed25519 key pair as a key file's content (the public half under its key id too). */
export function generateLedgerKey(keyId: string): LedgerConfig & { publicKey: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const pub = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  return {
    keyId,
    privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicKey: pub,
    publicKeys: { [keyId]: pub },
  };
}

function publicKeyObject(keyId: string, pem: string, where = 'ledger public keys'): KeyObject {
  let key: KeyObject;
  try {
    key = createPublicKey(pem);
  } catch (err) {
    throw new LedgerKeyInvalid(where, `public key ${keyId} cannot be read: ${(err as Error).message}`);
  }
  if (key.asymmetricKeyType !== 'ed25519')
    throw new LedgerKeyInvalid(where, `public key ${keyId} is ${key.asymmetricKeyType}, not ed25519`);
  return key;
}

/** Every public key a worker with this configuration accepts: the configured ones plus its own. */
export function publicKeysOf(config: LedgerConfig): LedgerPublicKeys {
  const own = createPublicKey(createPrivateKey(config.privateKey)).export({ type: 'spki', format: 'pem' }).toString();
  return { ...(config.publicKeys ?? {}), [config.keyId]: own };
}

/** Signs references with the worker's key. */
export class LedgerSigner {
  private readonly key: KeyObject;
  readonly keyId: string;

  constructor(config: LedgerConfig) {
    if (!config.keyId) throw new LedgerKeyInvalid('ledger', 'keyId is empty');
    try {
      this.key = createPrivateKey(config.privateKey);
    } catch (err) {
      throw new LedgerKeyInvalid(
        `ledger key ${config.keyId}`,
        `the private key cannot be read: ${(err as Error).message}`,
      );
    }
    if (this.key.asymmetricKeyType !== 'ed25519')
      throw new LedgerKeyInvalid(`ledger key ${config.keyId}`, `is ${this.key.asymmetricKeyType}, not ed25519`);
    this.keyId = config.keyId;
  }

  sign(ref: Omit<UnsignedLedgerRef, 'keyId'>): LedgerRef {
    const unsigned: UnsignedLedgerRef = { ...ref, keyId: this.keyId };
    return { ...unsigned, signature: sign(null, signedBytes(unsigned), this.key).toString('base64url') };
  }
}

export type SignatureCheck = { ok: true } | { ok: false; reason: 'unknown_key' | 'bad_signature'; message: string };

/** Checks only the signature: by a key the verifier knows, over exactly these fields. */
export function checkSignature(ref: LedgerRef, publicKeys: LedgerPublicKeys): SignatureCheck {
  const pem = Object.prototype.hasOwnProperty.call(publicKeys, ref.keyId) ? publicKeys[ref.keyId] : undefined;
  if (!pem)
    return {
      ok: false,
      reason: 'unknown_key',
      message: `signed by key ${ref.keyId}, which is not among the verifier's public keys (${Object.keys(publicKeys).join(', ') || 'none'})`,
    };
  let good = false;
  try {
    good = verify(null, signedBytes(ref), publicKeyObject(ref.keyId, pem), Buffer.from(ref.signature, 'base64url'));
  } catch {
    good = false;
  }
  return good
    ? { ok: true }
    : {
        ok: false,
        reason: 'bad_signature',
        message: `the signature does not match the reference's fields under key ${ref.keyId}`,
      };
}
