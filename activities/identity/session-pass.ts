// The MCP gateway's MACs and signatures, made with the worker's ticket key (the gateway is part of the
// worker's authority): the session pass a session's first run is authorized by, the signature each
// message to a session carries (common/session-proof.ts; the worker's Ed25519 key, signing-key.ts,
// so the run's validators check it with the public half), and session ids bound to the principal they
// were issued to. Every compare is timing-safe.
import { createHmac, randomBytes, timingSafeEqual, verify } from 'node:crypto';
import { canonicalJson } from '../../catalog/digest';
import type { SessionPass } from '../../common/gateway-protocol';
import { callProofFields, endProofFields, type CallProofSubject } from '../../common/session-proof';
import { proofMessage } from '../../common/worker-signature';
import type { RunIdentity } from '../../common/ticket';
import { signFields, signingKey, workerVerifyKey } from './signing-key';

/** The bytes a MAC keeps: 128 bits, 22 characters of base64url (as run tickets). */
const MAC_CHARS = 22;
/** A session id's random part: 16 bytes, 22 characters of base64url. */
const SID_RANDOM_BYTES = 16;

const Purpose = {
  Session: 'toolplane-mcp-session',
  SessionId: 'toolplane-mcp-sid',
  Conversation: 'toolplane-mcp-conversation',
  Confirmation: 'toolplane-mcp-confirmation',
  RequestState: 'toolplane-mcp-request-state',
  Task: 'toolplane-mcp-task',
} as const;

function mac(key: Buffer, fields: unknown[]): string {
  return createHmac('sha256', key).update(canonicalJson(fields)).digest('base64url').slice(0, MAC_CHARS);
}

function same(a: unknown, b: string): boolean {
  if (typeof a !== 'string') return false;
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function passMac(key: Buffer, workflowId: string, identity: RunIdentity, expiresAt: number, callKey: unknown): string {
  const id = { principal: identity.principal, groups: identity.groups, issuer: identity.issuer ?? null };
  // A pass from before signed calls names no key: its MAC covers what it did.
  const fields = [Purpose.Session, workflowId, id, expiresAt];
  return mac(key, callKey === undefined ? fields : [...fields, callKey]);
}

/** The public key a session's run checks the gateway's signatures with (base64url, raw 32 bytes). */
export function sessionVerifyKey(key: Buffer): string {
  return workerVerifyKey(key);
}

/** The pass that authorizes the first run of session `workflowId` for `identity`, valid `ttlMs` from now. */
export function issueSessionPass(key: Buffer, workflowId: string, identity: RunIdentity, ttlMs: number): SessionPass {
  const expiresAt = Date.now() + ttlMs;
  const callKey = sessionVerifyKey(key);
  return { identity, expiresAt, callKey, mac: passMac(key, workflowId, identity, expiresAt, callKey) };
}

/** Why a pass is refused, or `undefined` when this key issued it to `workflowId` and it has not expired. */
export function verifySessionPass(
  key: Buffer,
  workflowId: string,
  pass: SessionPass,
  now: number = Date.now(),
): 'bad_signature' | 'expired' | undefined {
  const wellFormed =
    typeof pass === 'object' &&
    pass !== null &&
    typeof pass.expiresAt === 'number' &&
    typeof pass.identity?.principal === 'string' &&
    Array.isArray(pass.identity.groups) &&
    (pass.callKey === undefined || typeof pass.callKey === 'string');
  if (!wellFormed || !same(pass.mac, passMac(key, workflowId, pass.identity, pass.expiresAt, pass.callKey)))
    return 'bad_signature';
  return pass.expiresAt <= now ? 'expired' : undefined;
}

/** The gateway's signature over call `c` of session `workflowId` (common/session-proof.ts `callProofFields`). */
export function callSignature(key: Buffer, workflowId: string, c: CallProofSubject): string {
  return signFields(key, callProofFields(workflowId, c));
}

/** Did the gateway (holding `key`) sign call `c` of session `workflowId` with `sig`? */
export function verifyCallSignature(key: Buffer, workflowId: string, c: CallProofSubject, sig: unknown): boolean {
  if (typeof sig !== 'string' || typeof c.key !== 'string' || typeof c.issuedAt !== 'number') return false;
  try {
    const bytes = Buffer.from(sig, 'base64url');
    return verify(null, proofMessage(callProofFields(workflowId, c)), signingKey(key).publicKey, bytes);
  } catch {
    return false;
  }
}

/** The gateway's signature ending session `workflowId`, made at `issuedAt`. */
export function endSignature(key: Buffer, workflowId: string, issuedAt: number): string {
  return signFields(key, endProofFields(workflowId, issuedAt));
}

/**
 * The MAC the gateway gives the answer its session's principal made to a confirmation question of
 * session `workflowId`: bound to the waiting call (its effect key), the answer and the exact value.
 */
export function confirmationMac(
  key: Buffer,
  workflowId: string,
  effectKey: string,
  decision: 'confirm' | 'reject',
  value: string | number | undefined,
): string {
  return mac(key, [Purpose.Confirmation, workflowId, effectKey, decision, value ?? null]);
}

export function verifyConfirmationMac(
  key: Buffer,
  workflowId: string,
  effectKey: string,
  decision: 'confirm' | 'reject',
  value: string | number | undefined,
  given: unknown,
): boolean {
  return same(given, confirmationMac(key, workflowId, effectKey, decision, value));
}

/** What a 2026-07-28 `requestState` holds: the confirmation question a call's result asked, in which session. */
export interface ConfirmationState {
  sessionId: string;
  effectKey: string;
  value: string | number;
}

/** A sealed token's body: its fields, readable by whoever holds it; the MAC after the dot makes them unchangeable. */
function sealedBody(fields: unknown[]): string {
  return Buffer.from(canonicalJson(fields)).toString('base64url');
}

/** A sealed token's fields and the MAC it carries, if it is one of `length` fields; the caller checks the MAC. */
function unseal(sealed: unknown, length: number): { fields: unknown[]; given: string } | undefined {
  if (typeof sealed !== 'string') return undefined;
  const [body, given, ...rest] = sealed.split('.');
  if (!body || !given || rest.length > 0) return undefined;
  let fields: unknown;
  try {
    fields = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (!Array.isArray(fields) || fields.length !== length) return undefined;
  return { fields: fields as unknown[], given };
}

/** The opaque `requestState` of an input_required result: the question, MACed so a client cannot change it. */
export function confirmationState(key: Buffer, s: ConfirmationState): string {
  const body = sealedBody([s.sessionId, s.effectKey, s.value]);
  return `${body}.${mac(key, [Purpose.RequestState, s.sessionId, s.effectKey, s.value])}`;
}

/** The question a `requestState` this key made holds, or undefined (not ours, changed, or another session's). */
export function readConfirmationState(key: Buffer, sessionId: string, state: unknown): ConfirmationState | undefined {
  const opened = unseal(state, 3);
  if (!opened) return undefined;
  const [sid, effectKey, value] = opened.fields;
  if (sid !== sessionId || typeof effectKey !== 'string') return undefined;
  if (typeof value !== 'string' && typeof value !== 'number') return undefined;
  if (!same(opened.given, mac(key, [Purpose.RequestState, sessionId, effectKey, value]))) return undefined;
  return { sessionId, effectKey, value };
}

/** What a 2025-11-25 task id holds: the `tools/call` it runs (its key, tool and arguments) and when it was created. */
export interface SealedCall {
  key: string;
  toolId: string;
  args: unknown;
  createdAt: number;
}

/** A task id: the call itself, MACed for one session, so the gateway keeps no task store and a client cannot change it. */
export function sealCall(key: Buffer, sessionId: string, c: SealedCall): string {
  const fields = [c.key, c.toolId, c.args ?? null, c.createdAt];
  return `${sealedBody(fields)}.${mac(key, [Purpose.Task, sessionId, ...fields])}`;
}

/** The call a task id this key sealed for `sessionId` names, or undefined (not ours, changed, or another session's). */
export function openSealedCall(key: Buffer, sessionId: string, sealed: unknown): SealedCall | undefined {
  const opened = unseal(sealed, 4);
  if (!opened) return undefined;
  const [callKey, toolId, args, createdAt] = opened.fields;
  if (typeof callKey !== 'string' || typeof toolId !== 'string' || typeof createdAt !== 'number') return undefined;
  if (!same(opened.given, mac(key, [Purpose.Task, sessionId, callKey, toolId, args, createdAt]))) return undefined;
  return { key: callKey, toolId, args, createdAt };
}

function sidMac(key: Buffer, random: string, principal: string): string {
  return mac(key, [Purpose.SessionId, random, principal]);
}

/** What a 2025-11-25 client declared at initialize that later requests must know: carried in its session id. */
export interface SessionTakes {
  /** The client answers `elicitation/create` (its `capabilities.elicitation`). */
  elicitation?: boolean;
}

/**
 * A new session id for `principal`: `<random>.<MAC of random and principal>`, checkable without a table.
 * The random part's first byte carries what the client takes (its low bit: elicitation), under the MAC.
 */
export function sessionIdFor(key: Buffer, principal: string, takes: SessionTakes = {}): string {
  const bytes = randomBytes(SID_RANDOM_BYTES);
  bytes[0] = (bytes[0]! & 0xfe) | (takes.elicitation ? 1 : 0);
  const random = bytes.toString('base64url');
  return `${random}.${sidMac(key, random, principal)}`;
}

/** What the client of a session `sessionIdFor` issued (on 2025-11-25, at initialize) declared it takes. */
export function sessionTakes(sessionId: string): SessionTakes {
  const random = Buffer.from(sessionId.split('.')[0] ?? '', 'base64url');
  return { elicitation: random.length > 0 && (random[0]! & 1) === 1 };
}

/**
 * The session id of conversation `conversation` of `principal` on the stateless revision (2026-07-28):
 * derived, not random, so every request naming the conversation reaches the same run, and bound to the
 * principal, so another principal naming the same conversation reaches a run of its own.
 */
export function conversationSessionId(key: Buffer, principal: string, conversation: string): string {
  const random = mac(key, [Purpose.Conversation, principal, conversation]);
  return `${random}.${sidMac(key, random, principal)}`;
}

/** Was `sessionId` issued by this key to `principal`? */
export function sessionOwnedBy(key: Buffer, sessionId: string, principal: string): boolean {
  const parts = typeof sessionId === 'string' ? sessionId.split('.') : [];
  if (parts.length !== 2 || parts[0]!.length !== MAC_CHARS) return false;
  return same(parts[1], sidMac(key, parts[0]!, principal));
}
