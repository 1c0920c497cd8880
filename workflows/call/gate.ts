// Workflow-safe, step 2 of a call: the run's gate (data flow, limits, credentials) decides, and may
// replace the arguments (a declared redaction, the trusted value of a protected field).
import type { ToolCall } from '../../catalog/tool-call';
import type { RemainingBudget } from '../../common/wire';
import type { JournalEntry } from '../journal';
import { StepErrorCode } from '../step-error';
import { refuse } from './refuse';

/**
 * A check made after preparation and before the effect key exists. Returning a refusal stops
 * the call; returning `args` replaces them.
 */
export type Gate = (call: ToolCall) => GateVerdict | Promise<GateVerdict>;

interface VerdictCommon {
  rule?: string;
  reason?: string;
  /** The tool declares that a person must approve (or may overrule a refusal). */
  askPerson?: boolean;
  deadline?: string | number;
  /** Charges the run's budgets; called only when the call goes ahead, after any approval. */
  charge?: () => void;
  /** Values the gate replaced with the trusted production they matched. */
  substitutions?: { pointer: string; written: string; sent: string }[];
  /** Every argument was trusted when the gate decided; signed into the call's ledger reference. */
  trustedArgs?: boolean;
  /** What the run may still spend once this call is charged; the tool sees it as `ctx.budget`. */
  remaining?: () => RemainingBudget;
}

export type GateVerdict =
  | (VerdictCommon & { allow: true; args?: Record<string, unknown> })
  | (VerdictCommon & { allow: false; rule: string; reason: string });

/** What the gate lets through: the arguments to send and the question for a person, if any. */
export interface Gated {
  args: Record<string, unknown>;
  verdict: GateVerdict | undefined;
}

export async function gateCall(entry: JournalEntry, call: ToolCall, gate: Gate | undefined): Promise<Gated> {
  if (!gate) return { args: call.args, verdict: undefined };
  const verdict = await gate(call);
  if (verdict.rule) entry.rule = verdict.rule;
  if (verdict.reason) entry.reason = verdict.reason;
  if (verdict.substitutions?.length) entry.substitutions = verdict.substitutions;
  if (!verdict.allow && !verdict.askPerson) refuse(entry, StepErrorCode.Refused, verdict.rule, verdict.reason);
  return { args: verdict.allow && verdict.args ? verdict.args : call.args, verdict };
}
