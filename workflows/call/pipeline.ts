// Workflow-safe: one governed call, flat: prepare → gate (judged once; what the call carries is
// resolved for it; judged again after the principal confirms a value) → approval → lease → budgets
// across runs → perform. Each step returns its decision; record.ts writes them into the call's
// journal entry. The effect key is computed once, from the arguments the gate let through, and travels as a value. A call the gate decides at
// once runs every step synchronously and awaits its activity and nothing else: the one promise it
// adds is the `.then` in which the send's result is written down (bench/replay-promises.ts counts them).
import { patched } from '@temporalio/workflow';
import type { ToolCall } from '../../catalog/tool-call';
import { effectKey } from '../../common/effect-key';
import { permitMac, toolPermit } from '../../common/ticket';
import type { JournalEntry } from '../../common/journal';
import type { AfterSend, Recovered } from '../recovery';
import { StepError } from '../step-error';
import { Patch } from '../../common/names';
import type { ConfirmAsk } from '../gate/verdict';
import { askApproval } from './approval';
import { askConfirmation } from './confirmation';
import { budgetRequest, reserveBudgets, settleAfterFailure, settleBudgets, type Reservation } from './budget';
import { decidedEvent, settledEvent } from './call-events';
import { sentArgs, type GateVerdict } from './gate';
import { judgeCall, type Judges } from './govern';
import { takeLease } from './lease';
import { replyOf, type CallHost, type CallOptions, type CallReply } from './options';
import { performCall, type PerformContext } from './perform';
import { prepareCall } from './prepare';
import { isRefusal, type Refusal } from './refuse';
import { countSends, recordAnswer, recordSent, recordVerdict, refuse } from './record';

export type { CallHost, CallOptions } from './options';

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
    ...(host.principalInOpening ? { principalInOpening: true } : {}),
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
  return new CallRun(host, entry, options, judges, landed).run(args);
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
    private readonly judges: Judges | undefined,
    private readonly landed?: (output: unknown) => void,
  ) {
    this.reply = replyOf(options);
  }

  run(args: unknown): Promise<unknown> {
    try {
      const call = prepareCall(this.host.catalog, this.entry.toolId, args, this.options.answering);
      if (isRefusal(call)) refuse(this.entry, call);
      const decided = this.judge(call);
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

  /** Step 2: the gate's verdict, then what follows from it. */
  private judge(call: ToolCall): Decided | Promise<Decided> {
    const verdict = judgeCall(call, this.options.gate, this.judges);
    return isPromise(verdict) ? verdict.then((v) => this.judged(call, v)) : this.judged(call, verdict);
  }

  /** Steps 2–3: the verdict goes into the journal, the call gets its key, and a person decides where asked. */
  private judged(call: ToolCall, verdict: GateVerdict | undefined): Decided | Promise<Decided> {
    const { entry } = this;
    if (verdict?.confirm && !verdict.allow && !verdict.askPerson && patched(Patch.PrincipalConfirms))
      return this.confirming(call, verdict.rule, verdict.confirm);
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

  /**
   * Step 2b: the principal is asked about the value the gate could not vouch for. Their yes makes it
   * their words, and the call is judged again, whole (it may ask about another field); anything else refuses it.
   */
  private confirming(call: ToolCall, rule: string, ask: ConfirmAsk): Promise<Decided> {
    const { entry, host } = this;
    const key = effectKey({ tool: call.toolId, args: call.args }, entry.position);
    entry.effectKey = key;
    const asked = {
      effectKey: key,
      position: entry.position,
      rule,
      sent: call.args,
      modelCallId: this.options.modelCallId,
      principal: host.principal,
    };
    return askConfirmation(call, ask, asked, host.escalator, host.publish).then((a) => {
      const by = a.by !== undefined ? { by: a.by } : {};
      (entry.confirmations ??= []).push({ pointer: ask.pointer, value: ask.value, answer: a.answer, ...by });
      if (a.answer !== 'confirmed') refuse(entry, a);
      ask.accept();
      return this.judge(call);
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
