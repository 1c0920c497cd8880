// Workflow-safe: one governed call, flat: prepare → gate (judged once; what the call carries is
// resolved for it) → approval → lease → budgets across runs → perform. Each step returns its
// decision; this file alone writes them into the call's journal entry. The effect key is computed
// once, from the arguments the gate let through, and travels as a value. A call the gate decides at
// once awaits nothing before its activity: no step adds a promise it does not need.
import type { OfferedTool, ToolCatalog } from '../../catalog/tool-catalog';
import type { Policy } from '../../catalog/policy';
import type { EffectEvent } from '../../common/run-events';
import { effectKey } from '../../common/effect-key';
import { permitMac, toolPermit, type RunTicket } from '../../common/ticket';
import type { CitedOrigin } from '../../common/wire';
import type { JournalEntry } from '../../common/journal';
import type { Escalator, Recovered } from '../recovery';
import { StepError } from '../step-error';
import { askApproval, type Approval, type Denial } from './approval';
import { budgetRequest, reserveBudgets, settleAfterFailure, settleBudgets } from './budget';
import { gatedArgs, type Gate, type GateVerdict } from './gate';
import { judgeCall, type Judges } from './govern';
import { takeLease } from './lease';
import { performCall, type Delegate, type PerformContext } from './perform';
import { prepareCall } from './prepare';
import { isRefusal, type Refusal } from './refuse';

export interface CallOptions {
  /** The model's tool call this execution answers; telemetry only, never in the effect key. */
  modelCallId?: string;
  /** The offer the model named; a call to any other tool is refused. */
  answering?: OfferedTool;
  /**
   * A check of the workflow's own. On a workflow's own call it only adds to the manifest's rules,
   * which run after it: it may refuse the call or ask a person, never change the arguments or let
   * through what the manifest refuses.
   */
  gate?: Gate;
  /**
   * Waives the manifest's trust rules (protected fields, the taint rule for mutating tools) for this
   * call, saying why: allowed only for a tool whose declaration says `accepts_untrusted_on_request`,
   * else the call is refused (rule `accept_untrusted`) before any activity exists. Sensitivity, what
   * the call carries, egress, spend and the run's limits still hold. Recorded in the call's journal
   * entry (`acceptedUntrusted`) and the run's Current Details.
   */
  acceptUntrusted?: { reason: string };
  /** A position reserved with `reserve()`, so concurrent calls keep the order the model gave. */
  position?: number;
  /** Performs the prepared, governed call elsewhere (a child workflow for independent tools). */
  delegate?: Delegate;
  /** Receives the labels of what the tool cited (recalled facts), verified by the worker. */
  onOrigins?: (origins: CitedOrigin[]) => void;
  /** In an MCP session: the gateway's call key and MAC, which the worker checks before the tool runs. */
  mcpCall?: { key: string; mac: string };
}

/** What the pipeline needs of the run it calls for. */
export interface CallHost {
  catalog: ToolCatalog;
  principal: string;
  ticket: RunTicket;
  policy: Policy;
  capabilities?: readonly string[];
  escalator: Escalator;
  /** The run's leases changed (one granted, started or committed). */
  leasesChanged(): void;
  /** The call ended: performed (`done`), or refused or failed, its journal entry final. */
  settled(entry: JournalEntry, done: boolean): void;
  /** Tells the run's stream (a view for clients; nothing decides from it). */
  publish?(event: EffectEvent): void;
}

/** The call's journal entry as it stands, for an event (a copy: the entry changes after). */
const snapshot = (entry: JournalEntry): JournalEntry => JSON.parse(JSON.stringify(entry)) as JournalEntry;

/** Ends the call: the refusal goes into the journal, and the caller gets a StepError. */
function refuse(entry: JournalEntry, r: Refusal): never {
  if (entry.decision !== 'denied') entry.decision = 'refused';
  entry.rule = r.refused.rule;
  entry.reason = r.refused.reason;
  entry.outcome = 'refused';
  entry.error = { code: r.refused.code, message: r.refused.reason };
  throw new StepError(r.refused.code, r.refused.reason, r.refused.rule);
}

function recordVerdict(entry: JournalEntry, verdict: GateVerdict): void {
  if (verdict.rule) entry.rule = verdict.rule;
  if (verdict.reason) entry.reason = verdict.reason;
  if (verdict.substitutions?.length) entry.substitutions = verdict.substitutions;
  if (verdict.acceptedUntrusted) entry.acceptedUntrusted = verdict.acceptedUntrusted;
  if (!verdict.allow && !verdict.askPerson)
    refuse(entry, { refused: { code: 'Refused', rule: verdict.rule, reason: verdict.reason } });
}

function recordAnswer(entry: JournalEntry, answer: Approval | Denial): void {
  if (isRefusal(answer)) {
    entry.decision = 'denied';
    if (answer.deniedBy) entry.decidedBy = answer.deniedBy;
    refuse(entry, answer);
  }
  entry.decision = 'approved';
  entry.decidedBy = answer.approved.by;
  entry.rule = answer.approved.rule;
  entry.reason = answer.approved.reason;
}

const isPromise = <T>(v: T | Promise<T>): v is Promise<T> => typeof (v as { then?: unknown })?.then === 'function';

/** What the send needs beside the call: how the run decided it, and where it tells how the send stands. */
function performContext(
  host: CallHost,
  entry: JournalEntry,
  verdict: GateVerdict | undefined,
  options: CallOptions,
  lease: string | undefined,
): PerformContext {
  return {
    ledger: {
      decision: verdict === undefined ? 'ungoverned' : entry.decision === 'approved' ? 'approved' : 'allowed',
      trustedArgs: verdict?.allow === true && verdict.trustedArgs === true,
    },
    budget: verdict?.remaining?.(),
    onProgress: ({ sends, recovery }) => {
      entry.attempts = sends;
      entry.recovery = recovery;
    },
    principal: host.principal,
    ticket: host.ticket,
    policy: host.policy,
    escalator: host.escalator,
    modelCallId: options.modelCallId,
    lease,
    delegate: options.delegate,
    ...(options.mcpCall ? { mcpCall: options.mcpCall } : {}),
  };
}

/** What the send did goes into the journal: its output to the caller, any other ending as a StepError. */
function recordSent(entry: JournalEntry, sent: Recovered, options: CallOptions): unknown {
  entry.attempts = sent.sends;
  entry.recovery = sent.recovery;
  if (sent.outcome === 'refused') refuse(entry, sent);
  entry.outcome = sent.outcome;
  if (sent.outcome !== 'ok') throw new StepError(sent.error.code, sent.error.message, sent.error.rule);
  // What the worker reported: an extension started under the call's lease.
  if (sent.events?.some((e) => e.kind === 'extension.started')) entry.lease?.states.push('started');
  if (sent.origins) {
    entry.cited = sent.origins.map(({ trusted, origin, reason }) => ({
      trusted,
      ...(origin ? { origin } : {}),
      ...(reason ? { reason } : {}),
    }));
    options.onOrigins?.(sent.origins);
  }
  return sent.output;
}

/**
 * Runs one call through every step; refusals end it before any activity exists. `judges`: who
 * judges it beside (or instead of) the workflow's own `gate`; without, the `gate` alone.
 */
export async function runCall(
  host: CallHost,
  entry: JournalEntry,
  args: unknown,
  options: CallOptions,
  judges?: Judges,
): Promise<unknown> {
  let done = false;
  try {
    const call = prepareCall(host.catalog, entry.toolId, args, options.answering);
    if (isRefusal(call)) refuse(entry, call);
    const decided = judgeCall(call, options.gate, judges);
    const verdict = decided && isPromise(decided) ? await decided : decided;
    if (verdict) recordVerdict(entry, verdict);
    const sent = gatedArgs(call, verdict);
    const key = effectKey({ tool: call.toolId, args: sent }, entry.position);
    entry.effectKey = key;
    if (verdict?.askPerson) {
      const asked = { effectKey: key, position: entry.position, sent, modelCallId: options.modelCallId };
      recordAnswer(entry, await askApproval(call, verdict, asked, host.escalator, host.publish));
    }
    const lease = takeLease(call.toolId, entry.position, host.capabilities);
    if (typeof lease === 'object') refuse(entry, lease);
    if (lease) {
      entry.lease = { id: lease, states: ['granted'] };
      host.leasesChanged();
    }
    // Budgets across runs, reserved last, just before the send (a delegated call reserves in its child).
    const budget = options.delegate
      ? undefined
      : budgetRequest(call, sent, verdict, host.principal, permitMac(host.ticket, toolPermit(call.toolId)) ?? '', key);
    const reserved = budget && !isRefusal(budget) ? await reserveBudgets(call, budget) : budget;
    if (reserved && isRefusal(reserved)) {
      verdict?.release?.();
      refuse(entry, reserved);
    }
    // Charged only now: a call refused at any step before, the lease included, costs nothing.
    verdict?.charge?.();
    host.publish?.(decidedEvent(entry, key));
    let output: unknown;
    try {
      const context = performContext(host, entry, verdict, options, lease);
      output = recordSent(entry, await performCall(call, sent, key, entry.position, context), options);
    } catch (err) {
      if (StepError.is(err)) entry.error = { code: err.code, message: err.message };
      if (reserved) await settleAfterFailure(reserved, err);
      throw err;
    }
    if (reserved) await settleBudgets(reserved, 'commit');
    if (entry.lease) {
      entry.lease.states.push('committed');
      host.leasesChanged();
    }
    done = true;
    return output;
  } finally {
    host.settled(entry, done);
    host.publish?.(settledEvent(entry, done));
  }
}

/** The event that tells the call goes out. */
function decidedEvent(entry: JournalEntry, key: string): EffectEvent {
  return {
    type: 'call-decided',
    position: entry.position,
    toolId: entry.toolId,
    effectKey: key,
    decision: entry.decision === 'approved' ? 'approved' : 'allowed',
    entry: snapshot(entry),
  };
}

/** The event that tells how the call ended. */
function settledEvent(entry: JournalEntry, done: boolean): EffectEvent {
  const base = { position: entry.position, toolId: entry.toolId, entry: snapshot(entry) };
  if (done) return { type: 'call-landed', ...base, effectKey: entry.effectKey ?? '' };
  const keyed = { ...base, ...(entry.effectKey ? { effectKey: entry.effectKey } : {}) };
  if (entry.outcome === 'refused')
    return {
      type: 'call-refused',
      ...keyed,
      ...(entry.rule ? { rule: entry.rule } : {}),
      reason: entry.reason ?? entry.error?.message ?? 'refused',
    };
  return { type: 'call-failed', ...keyed };
}
