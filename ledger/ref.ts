// Node-only: the bytes a ledger reference's signature covers, and the digest it carries for a call's
// arguments. The reference's shape is common/ledger-ref.ts.
import { canonicalJson, digestOf } from '../catalog/digest';
import type { LedgerRef, UnsignedLedgerRef } from '../common/ledger-ref';

/** What the signature covers: every field but the signature, as canonical JSON. */
export function signedBytes(ref: UnsignedLedgerRef | LedgerRef): Buffer {
  const { signature: _omit, ...fields } = ref as LedgerRef;
  return Buffer.from(canonicalJson(fields), 'utf8');
}

/** The digest a reference carries for a call's arguments. */
export function argsDigest(args: unknown): string {
  return digestOf(args ?? {});
}
