// The worker's tickets: MACs over a run's ids and what it may reach, made with a key only the
// worker's processes hold. An activity checks the MAC its request presents against its own
// activity info, so a request scheduled by any other workflow, or copied from another run's
// history, is refused before anything is sent.
import { createHmac, createSecretKey, randomBytes, timingSafeEqual, type KeyObject } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { canonicalJson } from '../../catalog/digest';
import { ToolplaneError } from '../../catalog/errors';
import type { RunIdentity, RunTicket, TicketCarry } from '../../common/ticket';
import type { SessionPass } from '../../common/gateway-protocol';
import { verifyCallSignature, verifyConfirmationMac, verifySessionPass } from './session-pass';
import { signFields, workerVerifyKey } from './signing-key';
import { streamBatchFields, type StreamPublish } from '../../common/stream-protocol';
import type { McpCallProof } from '../../common/session-proof';
import { reserveMacFields, sealOf, settleProofFields, type BudgetSeals } from '../../common/budget-proof';
import type { ReserveUpdate } from '../../common/budget-protocol';
import { dataDir, makePrivateDir } from '../data-dir';
import { ErrorCode } from '../../catalog/error-codes';

/** The bytes a MAC keeps: 128 bits, 22 characters of base64url. */
const MAC_BYTES = 16;
/** Permit MACs a worker keeps once computed (a run's calls check the same few). */
const COMPUTED_PERMITS = 4096;

export interface RunIds {
  workflowId: string;
  runId: string;
}

/**
 * The ticket key: `ticketKey` from the worker's options, else `TOOLPLANE_TICKET_KEY` (base64url or
 * hex, at least 32 bytes), else a key file under the data directory, made on first use. Every worker
 * of a task queue must hold the same key, as they share the data directory's blobs.
 */
export function loadTicketKey(given?: string): Buffer {
  const text = given ?? process.env.TOOLPLANE_TICKET_KEY;
  if (text !== undefined) return keyOf(text, given !== undefined ? 'ticketKey' : 'TOOLPLANE_TICKET_KEY');
  const file = path.join(dataDir(), 'ticket.key');
  makePrivateDir(path.dirname(file));
  try {
    fs.writeFileSync(file, randomBytes(32).toString('base64url'), { flag: 'wx', mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  return keyOf(fs.readFileSync(file, 'utf8').trim(), file);
}

function keyOf(text: string, where: string): Buffer {
  const key =
    /^[0-9a-f]+$/i.test(text) && text.length % 2 === 0 ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64url');
  if (key.length < 32)
    throw new ToolplaneError(
      ErrorCode.TicketKeyInvalid,
      `${where}: a ticket key needs at least 32 bytes (${key.length} given)`,
    );
  return key;
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export class TicketIssuer {
  /**
   * The key as OpenSSL holds it, made once: an HMAC keyed by raw bytes imports them on every call,
   * which costs a call that has not just run (each tool call checks one) about 70 µs more.
   */
  private readonly macKey: KeyObject;
  /** Permit MACs this worker computed, the oldest forgotten first beyond `COMPUTED_PERMITS`. */
  private readonly computed = new Map<string, string>();

  constructor(private readonly key: Buffer) {
    this.macKey = createSecretKey(key);
  }

  private mac(fields: unknown[]): string {
    return createHmac('sha256', this.macKey)
      .update(canonicalJson(fields))
      .digest()
      .subarray(0, MAC_BYTES)
      .toString('base64url');
  }

  private permitMac(run: RunIds, principal: string, permit: string): string {
    const fields = ['permit', run.workflowId, run.runId, principal, permit];
    // The MAC this worker computed for these very fields (JSON names them unambiguously): a run's
    // every call checks the same permit, and an HMAC each time was a tenth of a millisecond a call.
    const known = JSON.stringify(fields);
    let mac = this.computed.get(known);
    if (mac === undefined) {
      mac = this.mac(fields);
      if (this.computed.size >= COMPUTED_PERMITS) this.computed.delete(this.computed.keys().next().value!);
      this.computed.set(known, mac);
    }
    return mac;
  }

  private carryMac(run: RunIds, c: Omit<TicketCarry, 'mac'>): string {
    return this.mac(['carry', run.workflowId, run.runId, c.identity, [...c.grants].sort(), [...c.capabilities].sort()]);
  }

  /** The ticket for one run: a MAC per permit, and the carry its successors and children show. */
  issue(run: RunIds, identity: RunIdentity, permits: string[], grants: string[], capabilities: string[]): RunTicket {
    return {
      identity,
      permits: Object.fromEntries(permits.map((p) => [p, this.permitMac(run, identity.principal, p)])),
      carry: this.carryMac(run, { identity, grants, capabilities }),
    };
  }

  /** Did this worker issue `mac` to run `run`, acting for `principal`, for `permit`? */
  permits(run: RunIds, principal: string, permit: string, mac: unknown): boolean {
    return typeof mac === 'string' && same(mac, this.permitMac(run, principal, permit));
  }

  /** Why the MCP gateway's pass for session `workflowId` is refused (`undefined`: this key issued it, unexpired). */
  sessionPassRefusal(workflowId: string, pass: SessionPass): 'bad_signature' | 'expired' | undefined {
    return verifySessionPass(this.key, workflowId, pass);
  }

  /** Did the MCP gateway (holding this key) sign call `proof` of session `workflowId` to `toolId`, over the arguments its client sent? */
  madeCall(workflowId: string, toolId: string, proof: McpCallProof | undefined): boolean {
    if (!proof || typeof proof.argsDigest !== 'string' || typeof proof.issuedAt !== 'number') return false;
    const subject = {
      key: proof.key,
      toolId,
      argsDigest: proof.argsDigest,
      givenDigest: proof.givenDigest ?? null,
      issuedAt: proof.issuedAt,
    };
    return verifyCallSignature(this.key, workflowId, subject, proof.sig);
  }

  /** Did the MCP gateway (holding this key) relay this answer of session `workflowId`'s principal to the confirmation under `effectKey`? */
  relayedConfirmation(
    workflowId: string,
    effectKey: string,
    decision: 'confirm' | 'reject',
    value: string | number | undefined,
    mac: unknown,
  ): boolean {
    return verifyConfirmationMac(this.key, workflowId, effectKey, decision, value, mac);
  }

  /** The worker's MAC over a reserve to budget workflow `budgetWorkflowId` (common/budget-proof.ts). */
  budgetReserveMac(budgetWorkflowId: string, m: Omit<ReserveUpdate, 'mac'>): string {
    return this.mac(reserveMacFields(budgetWorkflowId, m));
  }

  /** Did this worker make the reserve `m` for budget workflow `budgetWorkflowId`? */
  madeBudgetReserve(budgetWorkflowId: string, m: ReserveUpdate): boolean {
    return typeof m?.mac === 'string' && same(m.mac, this.budgetReserveMac(budgetWorkflowId, m));
  }

  /** The proof that settles `reservation` of budget workflow `budgetWorkflowId` with `outcome`: sent only to settle it. */
  budgetSettleProof(budgetWorkflowId: string, reservation: string, outcome: 'commit' | 'release'): string {
    return this.mac(settleProofFields(budgetWorkflowId, reservation, outcome));
  }

  /** The reservation's seals: the hashes of its two settle proofs, which the budget workflow keeps. */
  budgetSeals(budgetWorkflowId: string, reservation: string): BudgetSeals {
    return {
      commit: sealOf(this.budgetSettleProof(budgetWorkflowId, reservation, 'commit')),
      release: sealOf(this.budgetSettleProof(budgetWorkflowId, reservation, 'release')),
    };
  }

  /** Did this worker make `proof` to settle `reservation` of budget workflow `budgetWorkflowId` with `outcome`? */
  madeBudgetSettle(
    budgetWorkflowId: string,
    reservation: string,
    outcome: 'commit' | 'release',
    proof: unknown,
  ): boolean {
    return typeof proof === 'string' && same(proof, this.budgetSettleProof(budgetWorkflowId, reservation, outcome));
  }

  /** The public key of the worker's signatures: a run's opening names it, and its stream checks token batches with it. */
  verifyKey(): string {
    return workerVerifyKey(this.key);
  }

  /** The worker's signature over a token batch to run `run` (common/stream-protocol.ts `streamBatchFields`). */
  signStreamBatch(run: RunIds, batch: Omit<StreamPublish, 'sig'>): string {
    return signFields(this.key, streamBatchFields(run.workflowId, run.runId, batch));
  }

  /** Did this worker issue run `run` this carry? */
  carries(run: RunIds, carry: TicketCarry): boolean {
    return typeof carry?.mac === 'string' && same(carry.mac, this.carryMac(run, carry));
  }
}
