// Workflow-safe: a run's budgets. Exceeding one refuses the next effect with a typed reason.
import { canonicalJson } from '../catalog/digest';
import { durationMs, type ToolDecl } from '../catalog/manifest';

export interface Limits {
  maxTurns?: number;
  maxToolCalls?: number;
  /** Model tokens, input and output together. */
  maxTokens?: number;
  maxCostMicros?: number;
  /** From the start of the run, e.g. "10m". */
  deadline?: string | number;
  maxDelegationDepth?: number;
}

export type LimitVerdict = { ok: true } | { ok: false; rule: string; reason: string };

export interface Usage {
  turns: number;
  toolCalls: number;
  inputTokens: number;
  outputTokens: number;
  costMicros: number;
  egressBytes: Record<string, number>;
}

const OK: LimitVerdict = { ok: true };

/** What a call sends out of the plane: its arguments as the provider will receive them. */
export function outboundBytes(args: unknown): number {
  return new TextEncoder().encode(canonicalJson(args)).length;
}

export class Budget {
  readonly usage: Usage = { turns: 0, toolCalls: 0, inputTokens: 0, outputTokens: 0, costMicros: 0, egressBytes: {} };
  private readonly deadlineAt: number | undefined;

  constructor(
    private readonly limits: Limits,
    startedAt: number,
    private readonly delegationDepth = 0,
  ) {
    this.deadlineAt = limits.deadline !== undefined ? startedAt + durationMs(limits.deadline) : undefined;
  }

  private common(now: number): LimitVerdict {
    if (this.deadlineAt !== undefined && now >= this.deadlineAt) return { ok: false, rule: 'limit:deadline', reason: `the run's deadline (${this.limits.deadline}) has passed` };
    if (this.limits.maxTokens !== undefined && this.usage.inputTokens + this.usage.outputTokens >= this.limits.maxTokens) {
      return { ok: false, rule: 'limit:tokens', reason: `the run has used ${this.usage.inputTokens + this.usage.outputTokens} of ${this.limits.maxTokens} model tokens` };
    }
    if (this.limits.maxCostMicros !== undefined && this.usage.costMicros >= this.limits.maxCostMicros) {
      return { ok: false, rule: 'limit:cost', reason: `the run has spent ${this.usage.costMicros} of ${this.limits.maxCostMicros} micro-units` };
    }
    return OK;
  }

  checkTurn(now: number): LimitVerdict {
    if (this.limits.maxTurns !== undefined && this.usage.turns >= this.limits.maxTurns) return { ok: false, rule: 'limit:turns', reason: `the run has taken its ${this.limits.maxTurns} model turns` };
    return this.common(now);
  }

  checkCall(decl: ToolDecl, args: unknown, now: number): LimitVerdict {
    const common = this.common(now);
    if (!common.ok) return common;
    if (this.limits.maxToolCalls !== undefined && this.usage.toolCalls >= this.limits.maxToolCalls) {
      return { ok: false, rule: 'limit:tool_calls', reason: `the run has made its ${this.limits.maxToolCalls} tool calls` };
    }
    if (this.limits.maxCostMicros !== undefined && this.usage.costMicros + decl.cost_micros > this.limits.maxCostMicros) {
      return { ok: false, rule: 'limit:cost', reason: `${decl.id} costs ${decl.cost_micros}; ${this.limits.maxCostMicros - this.usage.costMicros} micro-units remain` };
    }
    if (decl.egress) {
      const sent = this.usage.egressBytes[decl.egress.destination] ?? 0;
      const bytes = outboundBytes(args);
      if (sent + bytes > decl.egress.max_bytes_per_run) {
        return { ok: false, rule: `egress:${decl.egress.destination}`, reason: `sending ${bytes} more bytes to ${decl.egress.destination} would exceed its ${decl.egress.max_bytes_per_run}-byte limit for this run (${sent} sent)` };
      }
    }
    if (decl.concurrency?.class === 'independent' && this.limits.maxDelegationDepth !== undefined && this.delegationDepth + 1 > this.limits.maxDelegationDepth) {
      return { ok: false, rule: 'limit:delegation_depth', reason: `delegating from depth ${this.delegationDepth} would exceed the limit of ${this.limits.maxDelegationDepth}` };
    }
    return OK;
  }

  chargeCall(decl: ToolDecl, args: unknown): void {
    this.usage.toolCalls++;
    this.usage.costMicros += decl.cost_micros;
    if (decl.egress) this.usage.egressBytes[decl.egress.destination] = (this.usage.egressBytes[decl.egress.destination] ?? 0) + outboundBytes(args);
  }

  chargeTurn(usage: { inputTokens: number; outputTokens: number; costMicros?: number }): void {
    this.usage.turns++;
    this.usage.inputTokens += usage.inputTokens;
    this.usage.outputTokens += usage.outputTokens;
    this.usage.costMicros += usage.costMicros ?? 0;
  }
}
