// Workflow-safe: a run's budgets. Exceeding one refuses the next effect with a typed reason.
import { durationMs } from '../catalog/duration';
import type { ToolDecl } from '../catalog/manifest';
import type { Payment } from '../catalog/spend';
import { outboundBytes, type Outbound } from './outbound';
import { chargeSpend, checkSpend, type SpentMinor } from './spend-limit';
import type { RemainingBudget } from '../common/wire';

export interface Limits {
  maxTurns?: number;
  maxToolCalls?: number;
  /** Model tokens, input and output together. */
  maxTokens?: number;
  maxCostMicros?: number;
  /** From the start of the run, e.g. "10m". */
  deadline?: string | number;
  maxDelegationDepth?: number;
  /** Per currency, in minor units; only tightens the manifest's `spend.max_minor_per_payee`. */
  maxSpendMinorPerPayee?: Record<string, number | string>;
  /** Only tightens each tool's `egress.max_bytes_per_run`. */
  maxEgressBytesPerDestination?: number;
}

export type LimitVerdict = { ok: true } | { ok: false; rule: string; reason: string };

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

  constructor(
    private readonly limits: Limits,
    startedAt: number,
    private readonly delegationDepth = 0,
    /** A continued run starts from what the runs before it used. */
    carried?: Usage,
  ) {
    if (carried) {
      Object.assign(this.usage, carried, {
        egressBytes: { ...carried.egressBytes },
        spentMinor: Object.fromEntries(Object.entries(carried.spentMinor).map(([c, p]) => [c, { ...p }])),
      });
    }
    this.deadlineAt = limits.deadline !== undefined ? startedAt + durationMs(limits.deadline) : undefined;
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
      return { ok: false, rule: 'limit:deadline', reason: `the run's deadline (${this.limits.deadline}) has passed` };
    if (
      this.limits.maxTokens !== undefined &&
      this.usage.inputTokens + this.usage.outputTokens >= this.limits.maxTokens
    ) {
      return {
        ok: false,
        rule: 'limit:tokens',
        reason: `the run has used ${this.usage.inputTokens + this.usage.outputTokens} of ${this.limits.maxTokens} model tokens`,
      };
    }
    const costMicros = this.committed().costMicros;
    if (this.limits.maxCostMicros !== undefined && costMicros >= this.limits.maxCostMicros) {
      return {
        ok: false,
        rule: 'limit:cost',
        reason: `the run has spent ${costMicros} of ${this.limits.maxCostMicros} micro-units`,
      };
    }
    return OK;
  }

  checkTurn(now: number): LimitVerdict {
    if (this.limits.maxTurns !== undefined && this.usage.turns >= this.limits.maxTurns)
      return { ok: false, rule: 'limit:turns', reason: `the run has taken its ${this.limits.maxTurns} model turns` };
    return this.common(now);
  }

  /** Turns, calls, cost, deadline, delegation: what holds whatever the call sends. */
  checkCall(decl: ToolDecl, now: number): LimitVerdict {
    const common = this.common(now);
    if (!common.ok) return common;
    const spent = this.committed();
    if (this.limits.maxToolCalls !== undefined && spent.toolCalls >= this.limits.maxToolCalls) {
      return {
        ok: false,
        rule: 'limit:tool_calls',
        reason: `the run has made its ${this.limits.maxToolCalls} tool calls`,
      };
    }
    if (this.limits.maxCostMicros !== undefined && spent.costMicros + decl.cost_micros > this.limits.maxCostMicros) {
      return {
        ok: false,
        rule: 'limit:cost',
        reason: `${decl.id} costs ${decl.cost_micros}; ${this.limits.maxCostMicros - spent.costMicros} micro-units remain`,
      };
    }
    if (
      decl.concurrency?.class === 'independent' &&
      this.limits.maxDelegationDepth !== undefined &&
      this.delegationDepth + 1 > this.limits.maxDelegationDepth
    ) {
      return {
        ok: false,
        rule: 'limit:delegation_depth',
        reason: `delegating from depth ${this.delegationDepth} would exceed the limit of ${this.limits.maxDelegationDepth}`,
      };
    }
    return OK;
  }

  /** Egress per destination and money per payee, over the run, for what this call would send. */
  checkOutbound(decl: ToolDecl, outbound: Outbound, payment: Payment | undefined): LimitVerdict {
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

  /**
   * The charge for a call that goes ahead now: held from this moment, so calls running at the
   * same time count it, and charged by `charge` (at most once); `release` lets it go uncharged
   * (the call was refused after the gate, by a budget across runs).
   */
  hold(decl: ToolDecl, outbound: Outbound, payment: Payment | undefined): { charge(): void; release(): void } {
    const c: CallCharge = { decl, outbound, payment };
    this.held.add(c);
    return {
      charge: () => {
        if (!this.held.delete(c)) return;
        add(this.usage, c);
      },
      release: () => void this.held.delete(c),
    };
  }

  /** The charge for a call that may go ahead later (after a person's approval): nothing is held meanwhile. */
  charger(decl: ToolDecl, outbound: Outbound, payment: Payment | undefined): () => void {
    let charged = false;
    return () => {
      if (charged) return;
      charged = true;
      add(this.usage, { decl, outbound, payment });
    };
  }

  /** What remains once the calls charged and held so far are paid; `destinations` are those of the call asking. */
  remaining(decl: ToolDecl, destinations: readonly string[]): RemainingBudget {
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
