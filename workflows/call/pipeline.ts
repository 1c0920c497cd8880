// Workflow-safe: one governed call, flat: prepare → gate (judged once; what the call carries is
// resolved for it) → approval → lease → budgets across runs → perform. Each step returns its
// decision; this file alone writes them into the call's journal entry. The effect key is computed
// once, from the arguments the gate let through, and travels as a value. A call the gate decides at
// once runs every step synchronously and awaits its activity and nothing else: the one promise it
// adds is the `.then` in which the send's result is written down (bench/replay-promises.ts counts them).
import type { ToolCall } from '../../catalog/tool-call';
import { effectKey } from '../../common/effect-key';
import { permitMac, toolPermit } from '../../common/ticket';
import type { JournalEntry } from '../../common/journal';
import type { AfterSend, Recovered } from '../recovery';
import { StepError } from '../step-error';
import { askApproval, type Approval, type Denial } from './approval';
import { budgetRequest, reserveBudgets, settleAfterFailure, settleBudgets, type Reservation } from './budget';
import { decidedEvent, settledEvent } from './call-events';
import { sentArgs, type GateVerdict } from './gate';
import { judgeCall, type Judges } from './govern';
import { takeLease } from './lease';
import { replyOf, type CallHost, type CallOptions, type CallReply } from './options';
import { performCall, type PerformContext } from './perform';
import { prepareCall } from './prepare';
import { isRefusal, type Refusal } from './refuse';

export type { CallHost, CallOptions } from './options';

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
  const c: PerformContext = {
    ledger: {
      decision: verdict === undefined ? 'ungoverned' : entry.decision === 'approved' ? 'approved' : 'allowed',
      trustedArgs: verdict?.allow === true && verdict.trustedArgs === true,
    },
    budget: verdict?.remaining?.(),
    onProgress: (sofar) => {
      entry.attempts = sofar.sends;
      entry.recovery = sofar.recovery;
      countSends(entry, sofar);
    },
    principal: host.principal,
    ticket: host.ticket,
    policy: host.policy,
    escalator: host.escalator,
    modelCallId: options.modelCallId,
    lease,
    delegate: options.delegate,
  };
  if (options.mcpCall) c.mcpCall = options.mcpCall;
  return c;
}

/** Of the sends, those the tool failed and those no worker finished, when there were any. */
function countSends(entry: JournalEntry, c: Pick<JournalEntry, 'toolFailures' | 'lostSends'>): void {
  if (c.toolFailures) entry.toolFailures = c.toolFailures;
  if (c.lostSends) entry.lostSends = c.lostSends;
}

/** What the send did goes into the journal: its output to the caller, any other ending as a StepError. */
function recordSent(entry: JournalEntry, sent: Recovered, options: CallOptions): unknown {
  entry.attempts = sent.sends;
  entry.recovery = sent.recovery;
  countSends(entry, sent);
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

/** What the steps before the send decided: the call, its verdict, what it sends under which key, its lease. */
interface Decided {
  call: ToolCall;
  verdict: GateVerdict | undefined;
  sent: Record<string, unknown>;
  key: string;
  lease?: string;
}

/**
 * Runs one call through every step; refusals end it before any activity exists. `judges`: who
 * judges it beside (or instead of) the workflow's own `gate`; without, the `gate` alone. `landed`
 * hears the output of a call that landed, once the call is settled, before its caller does.
 */
export function runCall(
  host: CallHost,
  entry: JournalEntry,
  args: unknown,
  options: CallOptions,
  judges?: Judges,
  landed?: (output: unknown) => void,
): Promise<unknown> {
  return new CallRun(host, entry, options, landed).run(args, judges);
}

/**
 * One call on its way through the steps. A step that waits (the worker resolving what the call
 * carries, a person, the budgets across runs) chains what follows on it; a call the gate decides at
 * once runs every step synchronously and awaits its activity and nothing else.
 */
class CallRun implements AfterSend<unknown> {
  /** The budgets across runs the call holds until it is settled. */
  private reserved?: Reservation;
  /** What the call's promise resolves to, if its caller said (`replyingWith`). */
  private readonly reply?: CallReply;

  constructor(
    private readonly host: CallHost,
    private readonly entry: JournalEntry,
    private readonly options: CallOptions,
    private readonly landed?: (output: unknown) => void,
  ) {
    this.reply = replyOf(options);
  }

  run(args: unknown, judges: Judges | undefined): Promise<unknown> {
    try {
      const call = prepareCall(this.host.catalog, this.entry.toolId, args, this.options.answering);
      if (isRefusal(call)) refuse(this.entry, call);
      const verdict = judgeCall(call, this.options.gate, judges);
      const decided = isPromise(verdict) ? verdict.then((v) => this.judged(call, v)) : this.judged(call, verdict);
      if (!isPromise(decided)) return this.send(decided);
      return decided.then(
        (d) => this.send(d),
        (err: unknown) => this.unsent(err),
      );
    } catch (err) {
      // Refused before anything was sent.
      return Promise.resolve(this.unsent(err));
    }
  }

  /** Steps 2–3: the verdict goes into the journal, the call gets its key, and a person decides where asked. */
  private judged(call: ToolCall, verdict: GateVerdict | undefined): Decided | Promise<Decided> {
    const { entry } = this;
    if (verdict) recordVerdict(entry, verdict);
    const sent = sentArgs(call, verdict);
    const key = effectKey({ tool: call.toolId, args: sent }, entry.position, verdict?.written);
    entry.effectKey = key;
    const decided: Decided = { call, verdict, sent, key };
    if (!verdict?.askPerson) return this.held(decided);
    const asked = { effectKey: key, position: entry.position, sent, modelCallId: this.options.modelCallId };
    return askApproval(call, verdict, asked, this.host.escalator, this.host.publish).then((answer) => {
      recordAnswer(entry, answer);
      return this.held(decided);
    });
  }

  /** Step 4: the lease, then the budgets across runs, reserved last, just before the send. */
  private held(d: Decided): Decided | Promise<Decided> {
    const { entry, host } = this;
    const lease = takeLease(d.call.toolId, entry.position, host.capabilities);
    if (typeof lease === 'object') refuse(entry, lease);
    if (lease) {
      d.lease = lease;
      entry.lease = { id: lease, states: ['granted'] };
      host.leasesChanged();
    }
    // A delegated call reserves in its child.
    const budget = this.options.delegate
      ? undefined
      : budgetRequest(
          d.call,
          d.sent,
          d.verdict,
          host.principal,
          permitMac(host.ticket, toolPermit(d.call.toolId)) ?? '',
          d.key,
        );
    if (!budget) return this.charged(d);
    if (isRefusal(budget)) this.unreserved(d, budget);
    return reserveBudgets(d.call, budget).then((reserved) => {
      if (isRefusal(reserved)) this.unreserved(d, reserved);
      this.reserved = reserved;
      return this.charged(d);
    });
  }

  private unreserved(d: Decided, r: Refusal): never {
    d.verdict?.release?.();
    refuse(this.entry, r);
  }

  /** Charged only now: a call refused at any step before, the lease included, costs nothing. */
  private charged(d: Decided): Decided {
    d.verdict?.charge?.();
    this.host.publish?.(decidedEvent(this.entry, d.key));
    return d;
  }

  /** Step 5: the send; what it did comes back to `ended` or `threw`. */
  private send(d: Decided): Promise<unknown> {
    try {
      const context = performContext(this.host, this.entry, d.verdict, this.options, d.lease);
      return performCall(d.call, d.sent, d.key, this.entry.position, context, this);
    } catch (err) {
      return Promise.resolve(this.threw(err));
    }
  }

  /** The send is over: its output to the caller once the budgets and the lease are settled, any other ending a StepError. */
  ended(sent: Recovered): unknown {
    let output: unknown;
    try {
      output = recordSent(this.entry, sent, this.options);
    } catch (err) {
      return this.threw(err);
    }
    if (!this.reserved) return this.done(output);
    return settleBudgets(this.reserved, 'commit').then(
      () => this.done(output),
      (err: unknown) => this.unsent(err),
    );
  }

  /** The send ended without an output: what it reserved is settled as the failure says, and the caller gets the error. */
  threw(err: unknown): unknown {
    if (StepError.is(err)) this.entry.error = { code: err.code, message: err.message };
    const settling = this.reserved ? settleAfterFailure(this.reserved, err) : undefined;
    if (!settling) return this.unsent(err);
    return settling.then(
      () => this.unsent(err),
      (e: unknown) => this.unsent(e),
    );
  }

  private done(output: unknown): unknown {
    const { entry } = this;
    if (entry.lease) {
      entry.lease.states.push('committed');
      this.host.leasesChanged();
    }
    this.settle(true);
    this.landed?.(output);
    return this.reply ? this.reply.landed(output) : output;
  }

  /** The call ends without landing: refused, failed or cancelled. The caller gets the error, or its reply to it. */
  private unsent(err: unknown): unknown {
    this.settle(false);
    if (!this.reply) return Promise.reject(err);
    try {
      return this.reply.failed(err);
    } catch (e) {
      return Promise.reject(e);
    }
  }

  private settle(done: boolean): void {
    this.host.settled(this.entry, done);
    this.host.publish?.(settledEvent(this.entry, done));
  }
}
