// Workflow-safe: the one door through which workflow code reaches a tool.
import { condition, setCurrentDetails, setHandler } from '@temporalio/workflow';
import { durationMs } from '../catalog/manifest';
import { CatalogError } from '../catalog/errors';
import type { Policy } from '../catalog/policy';
import type { OfferedTool, ToolCatalog } from '../catalog/tool-catalog';
import { ToolCall } from '../catalog/tool-call';
import type { PerformRequest } from '../activities/tool-activities';
import { shortDigest } from '../catalog/digest';
import { effectKey } from './effect-key';
import { DECISIONS, pendingEscalations, resolveEscalation, type EscalationDecision, type PendingEscalation } from './escalation';
import { journalQuery } from './journal-query';
import type { JournalEntry } from './journal';
import { performWithRecovery, type Escalator } from './recovery';
import { StepError, StepErrorCode } from './step-error';

export interface RunScope {
  catalog: ToolCatalog;
  principal: string;
  grants: readonly string[];
  policy: Policy;
}

/**
 * A check made after preparation and before the effect key exists. Returning a refusal stops
 * the call; returning `args` replaces them (a declared redaction).
 */
export type Gate = (call: ToolCall) => GateVerdict | Promise<GateVerdict>;
export type GateVerdict =
  | { allow: true; args?: Record<string, unknown>; rule?: string; reason?: string; askPerson?: boolean; deadline?: string | number }
  /** `askPerson`: the tool declares that a person may overrule this refusal. */
  | { allow: false; rule: string; reason: string; askPerson?: boolean; deadline?: string | number };

export interface CallOptions {
  /** The model's tool call this execution answers; telemetry only, never in the effect key. */
  modelCallId?: string;
  /** The offer the model named; a call to any other tool is refused. */
  answering?: OfferedTool;
  gate?: Gate;
}

export class StepCtx {
  private position = 0;
  readonly journal: JournalEntry[] = [];
  private readonly pending = new Map<string, { info: PendingEscalation; decision?: EscalationDecision }>();
  private calls = 0;

  constructor(private readonly scope: RunScope) {
    setHandler(journalQuery, () => this.journal);
    setHandler(pendingEscalations, () => [...this.pending.values()].filter((p) => !p.decision).map((p) => p.info));
    setHandler(
      resolveEscalation,
      (decision) => {
        this.pending.get(decision.effectKey)!.decision = decision;
        return { accepted: true as const };
      },
      {
        validator: (decision) => {
          const p = this.pending.get(decision.effectKey);
          if (!p || p.decision) throw new Error(`no call is waiting for a decision under effect key ${decision.effectKey}`);
          if (!DECISIONS[p.info.kind].includes(decision.decision)) {
            throw new Error(`"${String(decision.decision)}" does not answer a ${p.info.kind} question; expected ${DECISIONS[p.info.kind].join(', ')}`);
          }
        },
      },
    );
  }

  get callCount(): number {
    return this.calls;
  }

  private readonly escalator: Escalator = {
    await: async (info) => {
      const slot: { info: PendingEscalation; decision?: EscalationDecision } = { info };
      this.pending.set(info.effectKey, slot);
      const decided = await condition(() => slot.decision !== undefined, Math.max(0, info.deadline - Date.now()));
      this.pending.delete(info.effectKey);
      return decided ? slot.decision : undefined;
    },
  };

  /** Refuses an unreachable tool or bad arguments before any activity exists. */
  async callTool(toolId: string, args: unknown, options: CallOptions = {}): Promise<unknown> {
    const position = this.position++;
    const entry: JournalEntry = { position, toolId, decision: 'allowed', attempts: 0, recovery: 'none', modelCallId: options.modelCallId };
    this.journal.push(entry);
    const refuse = (code: StepErrorCode, rule: string, reason: string): never => {
      if (entry.decision !== 'denied') entry.decision = 'refused';
      entry.rule = rule;
      entry.reason = reason;
      entry.outcome = 'refused';
      entry.error = { code, message: reason };
      throw new StepError(code, reason, rule);
    };

    if (options.answering && options.answering.toolId !== toolId) {
      refuse(StepErrorCode.Unreachable, 'answering', `the model's call named ${options.answering.toolId}, not ${toolId}`);
    }
    let call: ToolCall;
    try {
      call = ToolCall.prepare(this.scope.catalog, toolId, args);
    } catch (err) {
      if (!CatalogError.is(err)) throw err;
      const code = err.code === 'InvalidArguments' ? StepErrorCode.InvalidArguments : StepErrorCode.Unreachable;
      return refuse(code, err.code === 'InvalidArguments' ? 'schema' : 'unreachable', err.message);
    }
    let callArgs = call.args;
    if (options.gate) {
      const verdict = await options.gate(call);
      if (verdict.allow && verdict.args) callArgs = verdict.args;
      if (verdict.rule) entry.rule = verdict.rule;
      if (verdict.reason) entry.reason = verdict.reason;
      if (verdict.askPerson) {
        const question = verdict.allow ? `${toolId} needs a person's approval` : `${toolId} was refused (${verdict.rule}: ${verdict.reason}); a person may approve it`;
        setCurrentDetails(`**Waiting for approval**: ${question}`);
        const answer = await this.escalator.await({
          effectKey: effectKey({ tool: toolId, args: callArgs }, position),
          toolId,
          position,
          reason: question,
          deadline: Date.now() + durationMs(verdict.deadline ?? call.decl.escalation?.deadline ?? '24h'),
          kind: 'approval',
        });
        setCurrentDetails('');
        if (answer?.decision !== 'approve') {
          entry.decision = 'denied';
          const why = answer ? `denied by ${answer.by ?? 'a person'}${answer.decision === 'deny' && answer.reason ? `: ${answer.reason}` : ''}` : 'nobody approved it in time';
          return refuse(StepErrorCode.Refused, verdict.rule ?? 'approval', `${question}; ${why}`);
        }
        entry.decision = 'approved';
      } else if (!verdict.allow) {
        return refuse(StepErrorCode.Refused, verdict.rule, verdict.reason);
      }
    }

    const key = effectKey({ tool: toolId, args: callArgs }, position);
    entry.effectKey = key;
    this.calls++;
    const request: PerformRequest = {
      toolId,
      args: callArgs,
      principal: this.scope.principal,
      digest: shortDigest(call.digest),
      ...(call.decl.requires_ledger ? { requiresLedger: true } : {}),
      ...(call.decl.retries_landed ? { retriesLanded: true } : {}),
      ...(options.modelCallId ? { modelCallId: options.modelCallId } : {}),
      ...(this.scope.policy.allow === '*' && !this.scope.policy.deny?.length ? {} : { policy: this.scope.policy }),
    };
    try {
      return await performWithRecovery({ decl: call.decl, request, effectKey: key, position, entry, summary: `${toolId.replace(/^tool:\/\//, '')} #${position}`, escalator: this.escalator });
    } catch (err) {
      if (StepError.is(err)) entry.error = { code: err.code, message: err.message };
      throw err;
    }
  }
}
