// Checks a `produced_by` reference against its signature and the run's Temporal history: the run
// and the effect exist, and the history's entry is the one the reference describes.
import type { Client } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { effectKeyOfActivityId } from '../common/effect-key';
import { checkSignature, type LedgerPublicKeys } from './keys';
import { LedgerRef } from '../common/ledger-ref';
import { argsDigest } from './ref';

/**
 * Why a reference is invalid: malformed, an unknown key, a bad signature, no such run or effect, or an entry or fact that differs.
 *
 * @experimental
 */
export type LedgerInvalidReason =
  'malformed' | 'unknown_key' | 'bad_signature' | 'no_such_run' | 'no_such_effect' | 'entry_differs' | 'fact_differs';

/**
 * The journal entry a valid reference points to.
 *
 * @experimental
 */
export interface LedgerOrigin {
  workflowId: string;
  runId: string;
  effectKey: string;
  toolId: string;
  /** Who the origin run acted for, as its ticket said. */
  principal: string;
  decision: LedgerRef['decision'];
  trustedArgs: boolean;
  keyId: string;
  /** The call's activity completed in that run (a fact may have been written by a call that then failed). */
  completed: boolean;
}

/**
 * `verifyProducedBy`'s answer: valid with the origin run and effect, or invalid with the reason.
 *
 * @experimental
 */
export type LedgerVerdict =
  | { valid: true; origin: LedgerOrigin }
  | { valid: false; reason: LedgerInvalidReason; message: string; ref?: LedgerRef };

/**
 * What `verifyProducedBy` checks a reference with.
 *
 * @experimental
 */
export interface VerifyOptions {
  /** The public keys the verifier trusts, by key id. */
  publicKeys: LedgerPublicKeys;
  /**
   * The arguments the fact claims it was written with. When given, they must be the ones the
   * reference signed and the history holds: a genuine reference copied onto another fact fails.
   */
  args?: unknown;
}

/** The part of a perform request the ledger reads back from history. */
interface ScheduledPerform {
  toolId?: string;
  principal?: string;
  ticket?: string;
  args?: unknown;
  decision?: string;
  trustedArgs?: boolean;
}

type Event = temporal.api.history.v1.IHistoryEvent;

function isNotFound(err: unknown): boolean {
  const e = err as { name?: string; code?: number; cause?: { code?: number } };
  return e?.name === 'WorkflowNotFoundError' || e?.code === 5 || e?.cause?.code === 5;
}

/** How the history's first scheduling of the effect differs from the reference; empty when it agrees. */
function entryDifferences(first: Event, r: LedgerRef): string[] {
  const payload = first.activityTaskScheduledEventAttributes?.input?.payloads?.[0];
  const req = payload ? defaultPayloadConverter.fromPayload<ScheduledPerform>(payload) : undefined;
  const differs: string[] = [];
  if (req?.toolId !== r.toolId) differs.push(`tool ${req?.toolId} ≠ ${r.toolId}`);
  if (req?.principal !== r.principal) differs.push(`principal ${req?.principal} ≠ ${r.principal}`);
  // The worker signs only for a request whose ticket it checked; one without is no toolplane run's.
  if (typeof req?.ticket !== 'string') differs.push('the call carries no ticket');
  const digest = req ? argsDigest(req.args) : undefined;
  if (digest !== r.argsDigest) differs.push(`arguments ${digest} ≠ ${r.argsDigest}`);
  const decision = req?.decision ?? 'ungoverned';
  if (decision !== r.decision) differs.push(`decision ${decision} ≠ ${r.decision}`);
  if ((req?.trustedArgs === true) !== r.trustedArgs)
    differs.push(`trusted arguments ${req?.trustedArgs === true} ≠ ${r.trustedArgs}`);
  return differs;
}

/** The origin a valid reference vouches for, and whether its call completed. */
function originOf(r: LedgerRef, events: Event[], scheduled: Event[]): LedgerVerdict {
  const ids = new Set(scheduled.map((e) => String(e.eventId)));
  const completed = events.some(
    (e) =>
      e.activityTaskCompletedEventAttributes &&
      ids.has(String(e.activityTaskCompletedEventAttributes.scheduledEventId)),
  );
  return {
    valid: true,
    origin: {
      workflowId: r.workflowId,
      runId: r.runId,
      effectKey: r.effectKey,
      toolId: r.toolId,
      principal: r.principal,
      decision: r.decision,
      trustedArgs: r.trustedArgs,
      keyId: r.keyId,
      completed,
    },
  };
}

/** The run's history, or undefined when no such run exists. */
async function historyOf(client: Client, r: LedgerRef): Promise<Event[] | undefined> {
  try {
    const history = await client.workflow.getHandle(r.workflowId, r.runId).fetchHistory();
    return history.events ?? [];
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/**
 * Verifies a `produced_by` reference: a known key, a good signature, a run that exists, an effect
 * with that key in its history, and a history entry (tool, argument digest, decision, trust) equal to
 * the reference's. Never throws for a bad reference: it answers invalid with the reason.
 *
 * @experimental
 */
export async function verifyProducedBy(client: Client, ref: unknown, opts: VerifyOptions): Promise<LedgerVerdict> {
  const parsed = LedgerRef.safeParse(ref);
  if (!parsed.success)
    return {
      valid: false,
      reason: 'malformed',
      message: `not a ledger reference: ${parsed.error.issues.map((i) => `${i.path.join('.') || '/'} ${i.message}`).join('; ')}`,
    };
  const r = parsed.data;
  const invalid = (reason: LedgerInvalidReason, message: string): LedgerVerdict => ({
    valid: false,
    reason,
    message,
    ref: r,
  });

  const sig = checkSignature(r, opts.publicKeys);
  if (!sig.ok) return invalid(sig.reason, sig.message);
  if (opts.args !== undefined && argsDigest(opts.args) !== r.argsDigest)
    return invalid(
      'fact_differs',
      `the fact's arguments digest to ${argsDigest(opts.args)}, not the ${r.argsDigest} the reference signed`,
    );

  const events = await historyOf(client, r);
  if (!events)
    return invalid(
      'no_such_run',
      `no run ${r.runId} of workflow ${r.workflowId} in namespace ${client.options.namespace}`,
    );

  const scheduled = events.filter((e) => {
    const a = e.activityTaskScheduledEventAttributes;
    return a?.activityType?.name === 'performTool' && effectKeyOfActivityId(a.activityId ?? '') === r.effectKey;
  });
  if (scheduled.length === 0)
    return invalid('no_such_effect', `run ${r.runId} of ${r.workflowId} has no call with effect key ${r.effectKey}`);

  const differs = entryDifferences(scheduled[0]!, r);
  if (differs.length > 0)
    return invalid(
      'entry_differs',
      `the history's entry for ${r.effectKey} differs from the reference: ${differs.join('; ')}`,
    );
  return originOf(r, events, scheduled);
}

/** One line for a person: valid with the origin, or invalid with the reason. */
export function formatVerdict(v: LedgerVerdict): string {
  if (v.valid) {
    const o = v.origin;
    return [
      `valid: signed by ${o.keyId}`,
      `  origin run: ${o.workflowId} (run ${o.runId})`,
      `  principal:  ${o.principal} (from the run's ticket)`,
      `  effect:     ${o.effectKey} (${o.toolId}, ${o.decision}${o.completed ? '' : ', did not complete'})`,
      `  arguments:  ${o.trustedArgs ? 'all trusted' : 'not all trusted'}`,
    ].join('\n');
  }
  return `invalid (${v.reason}): ${v.message}`;
}
