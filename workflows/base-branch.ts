// Workflow-safe: what a run an operator reset learns of its base branch before its first effect past
// the reset point (issue 50). Temporal copies the base's history up to the reset point; everything the
// base did after it is gone from this run's history, but not from the world. So before such an effect
// the run asks once (`readBaseBranch`, its answer in history) which effects the base completed and
// which it sent without an outcome; recovery.ts adopts the first and lets the tool's recovery decide
// the second.
//
// Deterministic by markers: the question is asked only where a `Patch.ResetAdopts` marker is, and the
// marker is written only while the run executes live. Replaying the history copied from the base, no
// marker is there (or the base's own, for a reset of a reset, where the base asked too), so the copied
// part replays as the base ran. A run whose first event names its own run id was never reset: live,
// it calls nothing here, writes no marker and schedules nothing (replaying, it looks for a marker that
// is not there).
import { patched, proxyActivities, workflowInfo } from '@temporalio/workflow';
import { canonicalJson, sha256Hex } from '../catalog/digest';
import type { BaseBranch, BaseBranchActivities, BaseDecision, BaseEffect } from '../common/base-branch';
import { DECISIONS, type EscalationDecision, type PendingEscalation } from './escalation';
import type { PerformResult } from '../common/wire';
import { Patch } from '../common/names';

const base = proxyActivities<BaseBranchActivities>({
  startToCloseTimeout: '1m',
  retry: { maximumAttempts: 5, initialInterval: '1s' },
});

/** The questions asked so far in this history, and the latest answer (or the question under way). */
let asked = 0;
let answer: BaseBranch | undefined;
let pending: Promise<BaseBranch> | undefined;

/** A run whose history was copied from another: its start event names the run it was first written in. */
export function isResetRun(): boolean {
  const info = workflowInfo();
  return !!info.originalExecutionRunId && info.originalExecutionRunId !== info.runId;
}

/** This run continues (as new) a chain an operator reset: the base chain's later runs may have done what it is about to. */
let continuesReset = false;

/** Called once at the start of a run that continues a chain, with what the run it continues handed on. */
export function continuingResetChain(fromReset: boolean | undefined): void {
  if (fromReset) continuesReset = true;
}

/** Whether this run's effects ask what its base branch did: a reset run, or one continuing a reset run's chain. */
export function asksBaseBranch(): boolean {
  return continuesReset || isResetRun();
}

/**
 * What the base branch did, for an effect about to be sent: undefined when the run was never reset (or
 * replays a part of its history that asked nothing), the answer, or the question under way.
 */
export function baseBranch(): BaseBranch | Promise<BaseBranch> | undefined {
  // Replaying, the markers alone decide (a replayer may not know the run's own id); live, only a reset run asks.
  if (!asksBaseBranch() && !workflowInfo().unsafe.isReplaying) return undefined;
  if (pending) return pending;
  // Asked already in this run (not in the run it was copied from): that answer holds.
  if (answer && answer.forRun === workflowInfo().runId) return answer;
  if (!patched(`${Patch.ResetAdopts}.${asked + 1}`)) return answer;
  asked++;
  const asking = base.readBaseBranch().then(
    (a) => a,
    // The worker could not ask: nothing is adopted and nothing is sent blind; the next effect asks again.
    (err: unknown): BaseBranch => ({
      forRun: '',
      completed: {},
      unknown: {},
      unreadable: `the base branch could not be read: ${(err as Error)?.message ?? String(err)}`,
    }),
  );
  pending = asking.then((a) => {
    answer = a;
    pending = undefined;
    return a;
  });
  return pending;
}

/** What the base branch did with one effect: adopt its outcome, or the reason its outcome is unknown; undefined: never reached. */
export type Prior = { adopted: BaseEffect & { result: PerformResult } } | { unknown: string } | undefined;

/**
 * Completed under the same key with the same arguments: adopted, whatever the tool declares. Sent
 * without an outcome, or the base unreadable: unknown. Otherwise the base never reached it (changed
 * arguments make another key), and it is sent as usual.
 */
export function priorOf(base: BaseBranch, key: string, args: Record<string, unknown>): Prior {
  const completed = base.completed[key];
  const unknown = base.unknown[key];
  if (completed || unknown) {
    const digest = sha256Hex(canonicalJson(args));
    if (completed?.args === digest) return { adopted: completed };
    const e = unknown ?? completed!;
    return {
      unknown: `the run this one was reset from (${e.runId}) sent it (event ${e.eventId}) and recorded no outcome`,
    };
  }
  if (base.unreadable) return { unknown: `this run was reset, and ${base.unreadable}` };
  return undefined;
}

/**
 * The decision the base branch took on the very same waiting call (same effect key: same tool, arguments
 * and position), of the kind asked now and, for a confirmation, about the same value; undefined: asked
 * again. An in-doubt `retry` is never carried: it answered the base's own send, and the reset run's
 * unknown outcome may be of that resend, so a person decides again.
 */
export function carriedDecisionOf(base: BaseBranch, asked: PendingEscalation): EscalationDecision | undefined {
  const taken = base.decisions?.[asked.effectKey] ?? [];
  let last: BaseDecision | undefined;
  for (const d of taken) if ((DECISIONS[asked.kind] as readonly string[]).includes(d.decision)) last = d;
  if (!last || last.decision === 'retry') return undefined;
  const note = `given in run ${last.runId} (event ${last.eventId}) before the reset${last.reason ? `: ${last.reason}` : ''}`;
  const by = last.by !== undefined ? { by: last.by } : {};
  const key = asked.effectKey;
  switch (last.decision) {
    case 'approve':
    case 'deny':
    case 'abort':
    case 'reject':
      return { effectKey: key, decision: last.decision, ...by, reason: note };
    case 'landed':
      return { effectKey: key, decision: 'landed', output: last.output, ...by };
    case 'confirm':
      if (last.value === undefined || String(last.value) !== String(asked.field?.value)) return undefined;
      return { effectKey: key, decision: 'confirm', value: last.value, ...by };
    default:
      return undefined;
  }
}

/** A decision as a reset run takes it, or the base's retry it refuses (it answered the base's own send). */
export type Reapplied = EscalationDecision | { refused: BaseDecision };

/**
 * A reset run's decision, beside the base's: Temporal reapplies a base's updates after the reset point
 * (same update id). A reapplied in-doubt `retry` is never a resend here: where the base's resend
 * completed, it is that outcome (`landed`, the base's output, under the person's name and proof), else
 * refused, and a person decides again. Any other decision is taken as it is, with nothing awaited
 * (unless the base must be asked), so a decision replayed from history takes effect where it did.
 */
export function asReapplied(
  decision: EscalationDecision,
  updateId: string | undefined,
): Reapplied | Promise<Reapplied> {
  const base = updateId !== undefined && decision.decision === 'retry' ? baseBranch() : undefined;
  if (base === undefined) return decision;
  const take = (b: BaseBranch): Reapplied => {
    for (const [effectKey, taken] of Object.entries(b.decisions ?? {}))
      for (const d of taken) {
        if (d.updateId !== updateId || d.decision !== 'retry') continue;
        const done = b.completed[effectKey];
        return done ? { ...decision, decision: 'landed', output: done.result.output } : { refused: d };
      }
    return decision;
  };
  return isBranchPromise(base) ? base.then(take) : take(base);
}

export const isBranchPromise = (b: BaseBranch | Promise<BaseBranch>): b is Promise<BaseBranch> =>
  typeof (b as { then?: unknown }).then === 'function';
