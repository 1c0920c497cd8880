// Workflow-safe: the one door through which workflow code reaches a tool.
import { condition, setCurrentDetails, setHandler, upsertMemo } from '@temporalio/workflow';
import { EXTENSION_RUNTIME } from '../catalog/capabilities';
import { serverOf } from '../catalog/manifest';
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
  /** Capabilities the run holds, such as the extension-runtime lease. */
  capabilities?: readonly string[];
}

/**
 * A check made after preparation and before the effect key exists. Returning a refusal stops
 * the call; returning `args` replaces them (a declared redaction).
 */
export type Gate = (call: ToolCall) => GateVerdict | Promise<GateVerdict>;
export type GateVerdict =
  | { allow: true; args?: Record<string, unknown>; rule?: string; reason?: string; askPerson?: boolean; deadline?: string | number; charge?: () => void }
  /** `askPerson`: the tool declares that a person may overrule this refusal. `charge`: call it exactly when the call goes ahead. */
  | { allow: false; rule: string; reason: string; askPerson?: boolean; deadline?: string | number; charge?: () => void };

export interface CallOptions {
  /** The model's tool call this execution answers; telemetry only, never in the effect key. */
  modelCallId?: string;
  /** The offer the model named; a call to any other tool is refused. */
  answering?: OfferedTool;
  gate?: Gate;
  /** A position reserved with `reserve()`, so concurrent calls keep the order the model gave. */
  position?: number;
  /** Performs the prepared, governed call elsewhere (a child workflow for independent tools). */
  delegate?: (toolId: string, args: Record<string, unknown>, position: number) => Promise<unknown>;
}

export class StepCtx {
  private position = 0;
  readonly journal: JournalEntry[] = [];
  private readonly pending = new Map<string, { info: PendingEscalation; decision?: EscalationDecision }>();

  constructor(private readonly scope: RunScope) {
    setHandler(journalQuery, () => this.ordered());
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

  /** The lease lifecycle, in the run's memo: visible in the Web UI and kept in history. */
  private recordLeases(): void {
    upsertMemo({ toolplaneLeases: Object.fromEntries(this.journal.filter((e) => e.lease).map((e) => [e.lease!.id, e.lease!.states.join(' → ')])) });
  }

  /** Ends every lease the run still holds. */
  releaseLeases(): void {
    const held = this.journal.filter((e) => e.lease && e.lease.states.at(-1) !== 'released');
    if (held.length === 0) return;
    for (const e of held) e.lease!.states.push('released');
    this.recordLeases();
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

  /** The journal in position order (concurrent calls may enter it out of order). */
  ordered(): JournalEntry[] {
    return [...this.journal].sort((a, b) => a.position - b.position);
  }

  /** Reserves `n` consecutive positions; returns the first. */
  reserve(n: number): number {
    const first = this.position;
    this.position += n;
    return first;
  }

  /** Refuses an unreachable tool or bad arguments before any activity exists. */
  async callTool(toolId: string, args: unknown, options: CallOptions = {}): Promise<unknown> {
    const position = options.position ?? this.position++;
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
    let charge: (() => void) | undefined;
    if (options.gate) {
      const verdict = await options.gate(call);
      charge = verdict.charge;
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

    let lease: string | undefined;
    if (toolId.startsWith('ext:')) {
      // The extension starts only for a call that passed every gate, in a run that holds the lease.
      if (!this.scope.capabilities?.includes(EXTENSION_RUNTIME)) {
        return refuse(StepErrorCode.LeaseMissing, 'lease', `${toolId} is an extension tool and this run does not hold the ${EXTENSION_RUNTIME} capability; nothing was started`);
      }
      lease = `lease:${serverOf(toolId)}:${position}`;
      entry.lease = { id: lease, states: ['granted'] };
      this.recordLeases();
    }

    // The call goes ahead: only now is it charged to the run's budgets (after approval, if any).
    charge?.();
    const key = effectKey({ tool: toolId, args: callArgs }, position);
    entry.effectKey = key;
    const request: PerformRequest = {
      toolId,
      args: callArgs,
      principal: this.scope.principal,
      digest: shortDigest(call.digest),
      ...(call.decl.requires_ledger ? { requiresLedger: true } : {}),
      ...(call.decl.retries_landed ? { retriesLanded: true } : {}),
      ...(options.modelCallId ? { modelCallId: options.modelCallId } : {}),
      ...(lease ? { lease } : {}),
      ...(this.scope.policy.allow === '*' && !this.scope.policy.deny?.length ? {} : { policy: this.scope.policy }),
    };
    if (options.delegate) {
      try {
        entry.attempts = 1;
        const output = await options.delegate(toolId, callArgs, position);
        entry.outcome = 'ok';
        return output;
      } catch (err) {
        entry.outcome = 'failed';
        const message = (err as Error).message;
        entry.error = { code: StepErrorCode.Failed, message };
        throw new StepError(StepErrorCode.Failed, `${toolId} (delegated): ${message}`);
      }
    }
    try {
      const output = await performWithRecovery({
        decl: call.decl,
        request,
        effectKey: key,
        position,
        entry,
        summary: `${toolId.replace(/^tool:\/\//, '')} #${position}`,
        escalator: this.escalator,
        onEvents: (events) => {
          if (entry.lease && events.some((e) => e.kind === 'extension.started')) entry.lease.states.push('started');
        },
      });
      if (entry.lease) {
        entry.lease.states.push('committed');
        this.recordLeases();
      }
      return output;
    } catch (err) {
      if (StepError.is(err)) entry.error = { code: err.code, message: err.message };
      throw err;
    }
  }
}
