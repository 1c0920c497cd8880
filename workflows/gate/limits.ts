// Workflow-safe: a run's budgets. Exceeding one refuses the next effect with a typed reason.
import { CAPPED, withinCaps, type CappedLimit, type RunCaps } from '../../catalog/caps';
import { durationMs } from '../../catalog/duration';
import type { ToolDecl } from '../../catalog/manifest';
import type { Payment } from '../../catalog/spend';
import { outboundBytes, type Outbound } from './outbound';
import { chargeSpend, checkSpend, type SpentMinor } from './spend-limit';
import type { RemainingBudget } from '../../common/wire';
import type { RunLimits } from '../../common/run-input';

/** A run's own limits, as its input states them (the shape is common/run-input.ts's); each cap the manifest sets is a RunCaps field. */
export type Limits = RunLimits;
const _capsAreLimits = (l: Limits): RunCaps => l;

export type LimitVerdict = { ok: true } | { ok: false; rule: string; reason: string };

/** The rule of a limit the worker's cap set (tighter than the run's own, or the run had none). */
export const WORKER_LIMIT = 'worker_limit';

export interface Usage {
  turns: number;
  toolCalls: number;
  inputTokens: number;
  outputTokens: number;
  costMicros: number;
  /** Bytes sent per normalised destination: arguments and carried content. */
  egressBytes: Record<string, number>;
  /** Money paid per currency, per normalised payee, in minor units. */
  spentMinor: SpentMinor;
}

const OK: LimitVerdict = { ok: true };

type Exceeded = Extract<LimitVerdict, { ok: false }>;

/** A call's standing with the run's budgets: refused by a limit that holds whatever it sends, or what it may send. */
export type Allowance =
  Exceeded | { ok: true; leave(outbound: Outbound, payment: Payment | undefined, holdNow: boolean): Leave };

/** What sending costs: refused (egress per destination, spend per payee), or its charge and what then remains. */
export type Leave = Exceeded | { ok: true; charge(): void; release?(): void; remaining(): RemainingBudget };

/** What one call costs the run's budgets. */
interface CallCharge {
  decl: ToolDecl;
  outbound: Outbound;
  payment: Payment | undefined;
}

type Spent = Pick<Usage, 'toolCalls' | 'costMicros' | 'egressBytes' | 'spentMinor'>;

function add(target: Spent, c: CallCharge): void {
  target.toolCalls++;
  target.costMicros += c.decl.cost_micros;
  if (c.decl.egress)
    for (const d of c.outbound.destinations)
      target.egressBytes[d] = (target.egressBytes[d] ?? 0) + outboundBytes(c.outbound);
  if (c.payment) chargeSpend(target.spentMinor, c.payment);
}

export class Budget {
  readonly usage: Usage = {
    turns: 0,
    toolCalls: 0,
    inputTokens: 0,
    outputTokens: 0,
    costMicros: 0,
    egressBytes: {},
    spentMinor: {},
  };
  private readonly deadlineAt: number | undefined;
  /** Calls allowed and about to go ahead: counted by every check until they are charged. */
  private readonly held = new Set<CallCharge>();
  /** The limits in force: the run's own, tightened by the worker's caps. */
  private readonly limits: Limits;
  /** The limits the worker's caps set. */
  private readonly byWorker: readonly CappedLimit[];

  constructor(
    own: Limits,
    startedAt: number,
    private readonly delegationDepth = 0,
    /** A continued run starts from what the runs before it used. */
    carried?: Usage,
    /** The worker's caps (`step.scope.caps`): the run's own limits only tighten them. */
    caps?: RunCaps,
  ) {
    ({ limits: this.limits, byWorker: this.byWorker } = withinCaps(own, caps));
    if (carried) {
      Object.assign(this.usage, carried, {
        egressBytes: { ...carried.egressBytes },
        spentMinor: Object.fromEntries(Object.entries(carried.spentMinor).map(([c, p]) => [c, { ...p }])),
      });
    }
    this.deadlineAt = this.limits.deadline !== undefined ? startedAt + durationMs(this.limits.deadline) : undefined;
  }

  /**
   * A limit's verdict: `limit:<name>` for the run's own, `worker_limit:<name>` (and the manifest's
   * name for it in the reason) for one the worker's cap set.
   */
  private exceeded(key: CappedLimit, name: string, reason: string): LimitVerdict {
    if (!this.byWorker.includes(key)) return { ok: false, rule: `limit:${name}`, reason };
    return {
      ok: false,
      rule: `${WORKER_LIMIT}:${name}`,
      reason: `${reason} (the worker's cap: its manifest's limits.${CAPPED[key]} is ${String(this.limits[key])})`,
    };
  }

  /** Usage plus what held calls will add: what a check must count. */
  private committed(): Spent {
    if (this.held.size === 0) return this.usage;
    const u = this.usage;
    const view: Spent = {
      toolCalls: u.toolCalls,
      costMicros: u.costMicros,
      egressBytes: { ...u.egressBytes },
      spentMinor: Object.fromEntries(Object.entries(u.spentMinor).map(([c, p]) => [c, { ...p }])),
    };
    for (const c of this.held) add(view, c);
    return view;
  }

  private common(now: number): LimitVerdict {
    if (this.deadlineAt !== undefined && now >= this.deadlineAt)
      return this.exceeded('deadline', 'deadline', `the run's deadline (${this.limits.deadline}) has passed`);
    if (
      this.limits.maxTokens !== undefined &&
      this.usage.inputTokens + this.usage.outputTokens >= this.limits.maxTokens
    ) {
      return this.exceeded(
        'maxTokens',
        'tokens',
        `the run has used ${this.usage.inputTokens + this.usage.outputTokens} of ${this.limits.maxTokens} model tokens`,
      );
    }
    const costMicros = this.committed().costMicros;
    if (this.limits.maxCostMicros !== undefined && costMicros >= this.limits.maxCostMicros) {
      return this.exceeded(
        'maxCostMicros',
        'cost',
        `the run has spent ${costMicros} of ${this.limits.maxCostMicros} micro-units`,
      );
    }
    return OK;
  }

  checkTurn(now: number): LimitVerdict {
    if (this.limits.maxTurns !== undefined && this.usage.turns >= this.limits.maxTurns)
      return this.exceeded('maxTurns', 'turns', `the run has taken its ${this.limits.maxTurns} model turns`);
    return this.common(now);
  }

  /**
   * The run's budgets for one call, consulted once by the gate: the limits that hold whatever the call
   * sends (calls, cost, deadline, delegation) now; what it sends (egress per destination, money per
   * payee) once the gate knows it, read then, so calls decided meanwhile count. A call going ahead at
   * once is held from then (`holdNow`), so calls beside it cannot together pass a budget; one waiting
   * for a person holds nothing, so a denial costs nothing. The charge is made only when the call goes ahead.
   */
  consult(decl: ToolDecl, now: number): Allowance {
    const limit = this.checkCall(decl, now);
    if (!limit.ok) return limit;
    // It holds nothing but the declaration: the same tool again (the usual next call) reuses it.
    if (this.allowedDecl !== decl)
      this.allowance = { ok: true, leave: this.leave.bind(this, (this.allowedDecl = decl)) };
    return this.allowance!;
  }

  /** The last allowance `consult` made, and the declaration it reads. */
  private allowedDecl: ToolDecl | undefined = undefined;
  private allowance: Allowance | undefined = undefined;

  /** What the call sends, against egress per destination and spend per payee; held at once if `holdNow`. */
  private leave(decl: ToolDecl, outbound: Outbound, payment: Payment | undefined, holdNow: boolean): Leave {
    const leaving = this.checkOutbound(decl, outbound, payment);
    if (!leaving.ok) return leaving;
    const remaining = this.remaining.bind(this, decl, outbound.destinations);
    if (!holdNow) return { ok: true, charge: this.charger(decl, outbound, payment), remaining };
    // Held from this moment, so calls running at the same time count it, and charged by `charge` (at
    // most once); `release` lets it go uncharged (the call was refused after the gate, by a budget across runs).
    const c: CallCharge = { decl, outbound, payment };
    this.held.add(c);
    return { ok: true, charge: this.chargeHeld.bind(this, c), release: this.releaseHeld.bind(this, c), remaining };
  }

  private chargeHeld(c: CallCharge): void {
    if (this.held.delete(c)) add(this.usage, c);
  }

  private releaseHeld(c: CallCharge): void {
    this.held.delete(c);
  }

  /** Turns, calls, cost, deadline, delegation: what holds whatever the call sends. */
  private checkCall(decl: ToolDecl, now: number): LimitVerdict {
    const common = this.common(now);
    if (!common.ok) return common;
    const spent = this.committed();
    if (this.limits.maxToolCalls !== undefined && spent.toolCalls >= this.limits.maxToolCalls) {
      return this.exceeded('maxToolCalls', 'tool_calls', `the run has made its ${this.limits.maxToolCalls} tool calls`);
    }
    if (this.limits.maxCostMicros !== undefined && spent.costMicros + decl.cost_micros > this.limits.maxCostMicros) {
      return this.exceeded(
        'maxCostMicros',
        'cost',
        `${decl.id} costs ${decl.cost_micros}; ${this.limits.maxCostMicros - spent.costMicros} micro-units remain`,
      );
    }
    if (
      decl.concurrency?.class === 'independent' &&
      this.limits.maxDelegationDepth !== undefined &&
      this.delegationDepth + 1 > this.limits.maxDelegationDepth
    ) {
      return this.exceeded(
        'maxDelegationDepth',
        'delegation_depth',
        `delegating from depth ${this.delegationDepth} would exceed the limit of ${this.limits.maxDelegationDepth}`,
      );
    }
    return OK;
  }

  /** Egress per destination and money per payee, over the run, for what this call would send. */
  private checkOutbound(decl: ToolDecl, outbound: Outbound, payment: Payment | undefined): LimitVerdict {
    const spent = this.committed();
    if (decl.egress) {
      const max = Math.min(decl.egress.max_bytes_per_run, this.limits.maxEgressBytesPerDestination ?? Infinity);
      const bytes = outboundBytes(outbound);
      const carried =
        outbound.carriedBytes > 0 ? ` (${outbound.argumentBytes} in arguments, ${outbound.carriedBytes} carried)` : '';
      for (const d of outbound.destinations) {
        const sent = spent.egressBytes[d] ?? 0;
        if (sent + bytes > max)
          return {
            ok: false,
            rule: `egress:${d}`,
            reason: `sending ${bytes} more bytes${carried} to ${d} would exceed its ${max}-byte limit for this run (${sent} sent)`,
          };
      }
    }
    if (payment) {
      const spend = checkSpend(decl, payment, spent.spentMinor, this.limits.maxSpendMinorPerPayee);
      if (!spend.ok) return spend;
    }
    return OK;
  }

  /** The charge for a call that may go ahead later (after a person's approval): nothing is held meanwhile. */
  private charger(decl: ToolDecl, outbound: Outbound, payment: Payment | undefined): () => void {
    let charged = false;
    return () => {
      if (charged) return;
      charged = true;
      add(this.usage, { decl, outbound, payment });
    };
  }

  /** What remains once the calls charged and held so far are paid; `destinations` are those of the call asking. */
  private remaining(decl: ToolDecl, destinations: readonly string[]): RemainingBudget {
    const spent = this.committed();
    const out: RemainingBudget = {};
    if (this.limits.maxToolCalls !== undefined) out.toolCalls = Math.max(0, this.limits.maxToolCalls - spent.toolCalls);
    if (this.limits.maxCostMicros !== undefined)
      out.costMicros = Math.max(0, this.limits.maxCostMicros - spent.costMicros);
    if (decl.egress && destinations.length > 0) {
      const max = Math.min(decl.egress.max_bytes_per_run, this.limits.maxEgressBytesPerDestination ?? Infinity);
      out.egressBytes = Object.fromEntries(
        destinations.map((d) => [d, Math.max(0, max - (spent.egressBytes[d] ?? 0))]),
      );
    }
    if (this.deadlineAt !== undefined) out.deadline = this.deadlineAt;
    return out;
  }

  chargeTurn(usage: { inputTokens: number; outputTokens: number; costMicros?: number }): void {
    this.usage.turns++;
    this.usage.inputTokens += usage.inputTokens;
    this.usage.outputTokens += usage.outputTokens;
    this.usage.costMicros += usage.costMicros ?? 0;
  }
}
