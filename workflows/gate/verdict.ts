// Workflow-safe: what a gate decides about a call (data flow, limits, credentials), and may replace
// the arguments with (a declared redaction, the trusted value of a protected field).
import type { ToolCall } from '../../catalog/tool-call';
import type { Payment } from '../../catalog/spend';
import type { CanonicalArgs } from '../../common/effect-key';
import type { RemainingBudget } from '../../common/wire';
import type { Outbound } from './outbound';

/**
 * A check made after preparation and before the effect key exists. Returning a refusal stops
 * the call; returning `args` replaces them. A workflow's own gate may ask something first (a
 * promise); the manifest's gate is synchronous: the pipeline resolves what a call carries and hands
 * it over as data, so a call it decides at once costs the workflow no promise.
 */
export type Gate = (call: ToolCall) => GateVerdict | Promise<GateVerdict>;

/**
 * A refused value the run's principal may vouch for (the field's rule declares `principal_confirms`):
 * the pipeline asks them instead of refusing. `accept` makes the value the principal's words in the
 * provenance the gate judged with; the call is then judged again.
 */
export interface ConfirmAsk {
  /** The argument that holds the value. */
  pointer: string;
  /** The exact value, as the call would send it. */
  value: string | number;
  /** Where the value came from, as the gate traced it (the refusal's reason). */
  origin: string;
  accept(): void;
}

interface VerdictCommon {
  /**
   * The arguments to send in place of the call's (redactions, trusted values of protected fields):
   * for an allowed call, and for a violation a person may overrule, if they do.
   */
  args?: Record<string, unknown>;
  rule?: string;
  reason?: string;
  /** The tool declares that a person must approve (or may overrule a refusal). */
  askPerson?: boolean;
  deadline?: string | number;
  /** Charges the run's budgets; called only when the call goes ahead, after any approval. */
  charge?: () => void;
  /** Lets go of what the gate held for the call, uncharged: it was refused after the gate. */
  release?: () => void;
  /** What the call pays and sends, as the gate read it: what it reserves against budgets across runs. */
  leaving?: { outbound: Outbound; payment: Payment | undefined };
  /** Values the gate replaced with the trusted production they matched. */
  substitutions?: { pointer: string; written: string; sent: string }[];
  /** Every argument was trusted when the gate decided; signed into the call's ledger reference. */
  trustedArgs?: boolean;
  /** What the run may still spend once this call is charged; the tool sees it as `ctx.budget`. */
  remaining?: () => RemainingBudget;
  /**
   * The canonical JSON of the arguments the gate counted toward egress: the effect key reuses it when
   * they are the arguments sent (`of` is that very object), so they are canonicalised once per call.
   */
  written?: CanonicalArgs;
  /** A refusal the run's principal may lift by confirming this value (never with `askPerson`). */
  confirm?: ConfirmAsk;
  /** The trust rules were waived for this call at the workflow's request (`acceptUntrusted`), as the tool allows. */
  acceptedUntrusted?: { reason: string };
}

export type GateVerdict =
  (VerdictCommon & { allow: true }) | (VerdictCommon & { allow: false; rule: string; reason: string });
