// Workflow-safe: the calls a run waits on a person for. The resolveEscalation update, the checks on a
// decision (it answers a waiting call's question; on a worker with an identity, a declared approver's
// credential, verified by the worker and spent once), and the wait itself (the recovery's Escalator).
import {
  ActivityFailure,
  ApplicationFailure,
  condition,
  currentUpdateInfo,
  isCancellation,
  proxyLocalActivities,
  setHandler,
} from '@temporalio/workflow';
import type { DecisionActivities } from '../../common/wire';
import {
  DECISION_REJECTED,
  DecisionRejectedReason,
  DECISIONS,
  pendingEscalations,
  resolveEscalation,
  type DecisionAccepted,
  type EscalationDecision,
  type PendingEscalation,
} from '../escalation';
import {
  asReapplied,
  baseBranch,
  carriedDecisionOf,
  isBranchPromise,
  isResetRun,
  type Reapplied,
} from '../base-branch';
import type { Escalator } from '../recovery';
import { failureMessage, readableTime, type RunStatusBoard } from '../run-status';
import type { RunStream } from '../run-stream';
import { IDENTITY_REFUSED } from './authority';

/** The worker says who decides a waiting call, on the worker running the run: only it can ask. */
const { authorizeDecision } = proxyLocalActivities<DecisionActivities>({
  startToCloseTimeout: '30s',
  retry: { maximumAttempts: 3, nonRetryableErrorTypes: [IDENTITY_REFUSED] },
});

/** How the worker's refusal of an approver (an IdentityRefused reason) reads to whoever sent the decision; any other is a bad credential. */
const REJECTED_FOR: Readonly<Record<string, DecisionRejectedReason>> = {
  missing: DecisionRejectedReason.NoCredential,
  not_an_approver: DecisionRejectedReason.NotAnApprover,
  own_run: DecisionRejectedReason.OwnRun,
  not_the_principal: DecisionRejectedReason.NotThePrincipal,
  principal_mismatch: DecisionRejectedReason.ByMismatch,
  asserted: DecisionRejectedReason.Unavailable,
  replayed: DecisionRejectedReason.Replayed,
};

function rejectDecision(reason: DecisionRejectedReason, message: string): never {
  throw ApplicationFailure.nonRetryable(message, DECISION_REJECTED, { reason });
}

/** A call waiting for a decision, and the decision once one came. */
interface Waiting {
  info: PendingEscalation;
  decision?: EscalationDecision;
}

/** What the escalations need of their run. */
export interface EscalationsHost {
  /** The worker verifies who decides (`authorizeDecision`); else `by` is taken as given. */
  verifiesDecisions: boolean;
  /** The principal the run acts for: never its own approver. */
  runPrincipal: string;
  stream: RunStream;
  status: RunStatusBoard;
  /** Whom the run waits for changed: its Current Details say so. */
  changed(): void;
}

export class Escalations {
  private readonly pending = new Map<string, Waiting>();
  /** Credentials that decided a call of this run: one read from its history decides nothing more. */
  private readonly spentCredentials = new Set<string>();

  constructor(private readonly host: EscalationsHost) {
    // Where the worker verifies who decides, each question says an answer needs the approver's credential.
    const asked = (info: PendingEscalation): PendingEscalation =>
      host.verifiesDecisions ? { ...info, needsCredential: true } : info;
    setHandler(pendingEscalations, () => this.waiting().map(asked));
    // Rejected in the handler, never in a validator: a validator's rejection leaves a speculative
    // workflow task the server drops, and an SDK flag the OpenTelemetry interceptors first set there
    // is then missing from history, so the run fails every task after a restart (the family of
    // sdk-typescript#2023, which reports the PRNG drift; this flag loss has no upstream report).
    // An accepted update that fails is in history: the audit keeps the rejected attempt too.
    // The handler is async: on a worker with an identity it asks the worker (a local activity) who decides,
    // and a refusal is the accepted update's failure, in history beside the attempt, as above.
    setHandler(resolveEscalation, (decision) => this.resolve(decision));
  }

  /** The calls waiting for a decision nobody has given yet. */
  waiting(): PendingEscalation[] {
    // Asked after every call that settles: a run that waits for nobody builds nothing.
    if (this.pending.size === 0) return [];
    return [...this.pending.values()].filter((p) => !p.decision).map((p) => p.info);
  }

  /** The run ended: it waits for nobody any more. */
  clear(): void {
    this.pending.clear();
  }

  /**
   * Nothing is awaited before the decision is taken unless a reset run must ask its base: a decision
   * replayed from history takes effect at the point it took effect when recorded (same commands, same order).
   */
  private resolve(decision: EscalationDecision): Promise<DecisionAccepted> {
    const taken = isResetRun() ? asReapplied(decision, currentUpdateInfo()?.id) : decision;
    return 'then' in taken ? taken.then((d) => this.take(d)) : this.take(taken);
  }

  private async take(reapplied: Reapplied): Promise<DecisionAccepted> {
    if ('refused' in reapplied)
      rejectDecision(
        DecisionRejectedReason.Replayed,
        `this retry was given in run ${reapplied.refused.runId} (event ${reapplied.refused.eventId}), which this run was reset from, for that run's send; a person decides again here`,
      );
    const decision = reapplied;
    const p = this.waitingFor(decision);
    if (!this.host.verifiesDecisions) {
      p.decision = decision;
      return { accepted: true as const, ...(decision.by !== undefined ? { by: decision.by } : {}) };
    }
    const taken = await this.verifiedDecision(decision, p.info);
    // Asked again: the call may have been decided, or its deadline passed, while the worker answered.
    if (this.waitingFor(decision) !== p)
      rejectDecision(DecisionRejectedReason.NotWaiting, `the call under ${decision.effectKey} was decided meanwhile`);
    // Or the same credential decided another call meanwhile (two decisions sent at once).
    const proof = proofOf(decision)!;
    this.unspent(proof);
    this.spentCredentials.add(proof);
    p.decision = taken;
    return { accepted: true as const, by: taken.by };
  }

  private unspent(credential: string): void {
    if (this.spentCredentials.has(credential))
      rejectDecision(
        DecisionRejectedReason.Replayed,
        'this credential already decided a call of this run; each decision carries a credential of its own',
      );
  }

  /** The call waiting under the decision's key, if the decision answers its question. */
  private waitingFor(decision: EscalationDecision): Waiting {
    const p = this.pending.get(decision.effectKey);
    if (!p || p.decision)
      rejectDecision(
        DecisionRejectedReason.NotWaiting,
        `no call is waiting for a decision under effect key ${decision.effectKey}`,
      );
    if (!DECISIONS[p.info.kind].includes(decision.decision))
      rejectDecision(
        DecisionRejectedReason.WrongQuestion,
        `"${String(decision.decision)}" does not answer a ${p.info.kind} question; expected ${DECISIONS[p.info.kind].join(', ')}`,
      );
    const asked = p.info.field?.value;
    // Compared as text: a value typed on a command line confirms the number it spells.
    if (decision.decision === 'confirm' && String(decision.value) !== String(asked))
      rejectDecision(
        DecisionRejectedReason.WrongValue,
        `the confirmation names ${JSON.stringify(decision.value)}, but the call under ${decision.effectKey} asks about ${JSON.stringify(asked)}; nothing was confirmed`,
      );
    return p;
  }

  /** The decision as the worker verified it: by its credential's subject, a declared approver, not the run's own principal. */
  private async verifiedDecision(decision: EscalationDecision, info: PendingEscalation): Promise<EscalationDecision> {
    const { credential, by, ...rest } = decision;
    const relay = 'relay' in decision ? decision.relay : undefined;
    const proof = proofOf(decision);
    if (proof === undefined)
      rejectDecision(
        DecisionRejectedReason.NoCredential,
        info.kind === 'confirmation'
          ? `"${decision.decision}" carries no credential; this run's worker takes confirmations only from ${this.host.runPrincipal}, the principal it acts for, with their own verified credential`
          : `"${decision.decision}" carries no credential; this run's worker takes decisions only from declared approvers with a verified credential`,
      );
    this.unspent(proof);
    let who;
    try {
      who = await authorizeDecision.executeWithOptions({ summary: `who decides #${info.position} ${info.toolId}` }, [
        {
          ...(credential !== undefined ? { credential } : {}),
          ...(relay !== undefined ? { relay } : {}),
          ...(decision.decision === 'confirm' ? { value: decision.value } : {}),
          ...(by !== undefined ? { by } : {}),
          decision: decision.decision,
          toolId: info.toolId,
          effectKey: decision.effectKey,
          ...(info.rule !== undefined ? { rule: info.rule } : {}),
          runPrincipal: this.host.runPrincipal,
        },
      ]);
    } catch (err) {
      decisionRefused(err, decision);
    }
    return { ...rest, by: who.by };
  }

  /** Waits for a person's decision on a call until its deadline; the stream tells of in-doubt calls. */
  readonly escalator: Escalator = {
    await: async (info) => {
      // A reset run takes the decision its base branch took on this very call, and asks nobody again.
      const base = baseBranch();
      const carried = base && carriedDecisionOf(isBranchPromise(base) ? await base : base, info);
      if (carried) {
        if (info.kind === 'in_doubt' && (carried.decision === 'landed' || carried.decision === 'abort'))
          this.host.stream.publish({
            type: 'escalation-decided',
            position: info.position,
            toolId: info.toolId,
            effectKey: info.effectKey,
            decision: carried.decision,
            ...(carried.by !== undefined ? { by: carried.by } : {}),
          });
        return carried;
      }
      const slot: Waiting = { info };
      this.pending.set(info.effectKey, slot);
      this.host.changed();
      const inDoubt = info.kind === 'in_doubt';
      const call = { position: info.position, toolId: info.toolId, effectKey: info.effectKey };
      if (inDoubt)
        this.host.stream.publish({ type: 'call-escalated', ...call, reason: info.reason, deadline: info.deadline });
      try {
        const decided = await condition(() => slot.decision !== undefined, Math.max(0, info.deadline - Date.now()), {
          summary: `${WAITED_FOR[info.kind]} deadline ${readableTime(info.deadline)}: #${info.position} ${info.toolId}`,
        });
        const decision = decided ? slot.decision : undefined;
        if (inDoubt)
          this.host.stream.publish({
            type: 'escalation-decided',
            ...call,
            decision:
              decision?.decision === 'retry' || decision?.decision === 'landed' || decision?.decision === 'abort'
                ? decision.decision
                : 'expired',
            ...(decision?.by !== undefined ? { by: decision.by } : {}),
          });
        return decision;
      } catch (err) {
        // Cancelled while waiting: the run stops saying it waits, and says nobody decided the call.
        if (isCancellation(err)) this.host.status.waitCutShort(info);
        throw err;
      } finally {
        this.pending.delete(info.effectKey);
        this.host.changed();
      }
    },
  };
}

const WAITED_FOR: Readonly<Record<PendingEscalation['kind'], string>> = {
  approval: 'approval',
  in_doubt: 'in-doubt decision',
  confirmation: "the principal's confirmation",
};

/** What proves who sent a decision: their credential, or the gateway's MAC on the principal's relayed answer. */
function proofOf(decision: EscalationDecision): string | undefined {
  const relay = 'relay' in decision ? decision.relay : undefined;
  if (typeof relay === 'string' && relay.length > 0) return relay;
  const { credential } = decision;
  return typeof credential === 'string' && credential.length > 0 ? credential : undefined;
}

/** The worker's refusal of a decision (or its failure to answer), as the update's rejection. */
function decisionRefused(err: unknown, decision: EscalationDecision): never {
  if (isCancellation(err)) throw err;
  // The worker's refusal: the local activity's own failure, or an activity failure's cause.
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure && cause.type === IDENTITY_REFUSED) {
    const refused = (cause.details?.[0] as { reason?: unknown } | undefined)?.reason;
    rejectDecision(
      (typeof refused === 'string' && Object.prototype.hasOwnProperty.call(REJECTED_FOR, refused)
        ? REJECTED_FOR[refused]
        : undefined) ?? DecisionRejectedReason.BadCredential,
      `"${decision.decision}" refused: ${cause.message}`,
    );
  }
  rejectDecision(
    DecisionRejectedReason.Unavailable,
    `the worker could not check who decides: ${failureMessage(cause ?? err)}`,
  );
}
