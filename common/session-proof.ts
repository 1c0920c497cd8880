// Workflow-safe, shared by the MCP gateway (which signs) and the session workflow (which checks, in its
// update validators): what proves that a message to an MCP session's run is the gateway's own. The
// gateway holds the worker's ticket key and derives from it an Ed25519 signing key; the session's pass
// names the public half (under the pass's MAC, which the worker checks when the run opens). The run
// holds nothing secret: a validator checks a signature with the public key alone, so an update nobody
// with the key signed is refused before it enters history, and reading history helps no forger.
//
// - A call is signed over the session's workflow id, its key, its tool, the digest of its canonical
//   arguments, the digest of what the host declared with it (`given`) and when it was signed. An old
//   signature with other arguments fails, and one older than `SESSION_PROOF_VALID_MS` is stale.
// - An end is signed over the workflow id and when it was signed.
import { canonicalJson, sha256Hex } from '../catalog/digest';
import { signedByWorker } from './worker-signature';

/** The failure type of an update the session's validator refuses: it never entered history. */
export const SESSION_MESSAGE_REFUSED = 'McpSessionMessageRefused';

/** Why an update was refused, in the failure's details. */
export const SessionRefusedReason = {
  /** No signature, or not shaped as the gateway sends it. */
  Malformed: 'malformed',
  /** The signature is not the gateway's for this session, call and arguments. */
  BadProof: 'bad_proof',
  /** Signed too long ago (or ahead of the run's clock): a replay. */
  Stale: 'stale',
} as const;
export type SessionRefusedReason = (typeof SessionRefusedReason)[keyof typeof SessionRefusedReason];

/** A message is taken this long after the gateway signed it, and no longer. */
export const SESSION_PROOF_VALID_MS = 10 * 60_000;
/** How far ahead of the run's clock a signature's time may be (the gateway's clock may run ahead). */
export const SESSION_PROOF_SKEW_MS = 5 * 60_000;

/** The digest of a call's canonical arguments, as its signature covers it. */
export const callArgsDigest = (args: unknown): string => sha256Hex(canonicalJson(args ?? null));

/** What a call's signature is about: its key, tool, the digests of its arguments and of `given` (null: none), and its time. */
export interface CallProofSubject {
  key: string;
  toolId: string;
  argsDigest: string;
  givenDigest: string | null;
  issuedAt: number;
}

/** A call request's subject, its digests computed from what it carries. */
export function callSubject(
  req: { key: string; toolId: string; args: unknown; given?: unknown },
  issuedAt: number,
): CallProofSubject {
  return {
    key: req.key,
    toolId: req.toolId,
    argsDigest: callArgsDigest(req.args),
    givenDigest: req.given === undefined ? null : callArgsDigest(req.given),
    issuedAt,
  };
}

/** What a call's signature covers, in order. */
export function callProofFields(workflowId: string, c: CallProofSubject): unknown[] {
  return ['toolplane-mcp-call', workflowId, c.key, c.toolId, c.argsDigest, c.givenDigest, c.issuedAt];
}

/** What an end's signature covers, in order. */
export function endProofFields(workflowId: string, issuedAt: number): unknown[] {
  return ['toolplane-mcp-end', workflowId, issuedAt];
}

/** A session message's proof, as the validator reads it: a time and a signature. */
export interface SessionProof {
  issuedAt?: unknown;
  sig?: unknown;
}

/** Why the message is refused (reason and text), or undefined when `sig` is the gateway's over `fields` and fresh. */
export function proofRefusal(
  callKey: string,
  proof: SessionProof,
  fields: (issuedAt: number) => unknown[],
  now: number,
): { reason: SessionRefusedReason; message: string } | undefined {
  if (typeof proof.sig !== 'string' || typeof proof.issuedAt !== 'number')
    return {
      reason: SessionRefusedReason.Malformed,
      message:
        "only the MCP gateway sends to a session's run: its messages carry the gateway's signature, and this one carries none",
    };
  if (proof.issuedAt > now + SESSION_PROOF_SKEW_MS || proof.issuedAt < now - SESSION_PROOF_VALID_MS)
    return {
      reason: SessionRefusedReason.Stale,
      message: `the message was not signed in the last ${SESSION_PROOF_VALID_MS / 60_000} minutes; a replayed message is not taken`,
    };
  if (!signedByWorker(callKey, fields(proof.issuedAt), proof.sig))
    return {
      reason: SessionRefusedReason.BadProof,
      message:
        "the signature is not the MCP gateway's for this session and this message (its tool and arguments); nothing was recorded",
    };
  return undefined;
}

/**
 * What a session's call carries to the worker's `performTool`: the gateway's signature and what it
 * covers (the digests of the arguments the client sent, which the gate may since have rewritten). A
 * call scheduled before signed calls carried `mac` alone; the worker no longer takes it.
 */
export interface McpCallProof {
  key: string;
  sig?: string;
  issuedAt?: number;
  argsDigest?: string;
  givenDigest?: string | null;
  /** A call MAC of a gateway before signed calls (key and tool only): refused. */
  mac?: string;
}
