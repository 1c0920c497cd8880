// Workflow-safe: what the steps of a call decided, written into its journal entry (the pipeline's
// records): a refusal, the gate's verdict, a person's answer, what the send did.
import type { JournalEntry } from '../../common/journal';
import type { Recovered } from '../recovery';
import { StepError } from '../step-error';
import type { Approval, Denial } from './approval';
import type { GateVerdict } from './gate';
import type { CallOptions } from './options';
import { isRefusal, type Refusal } from './refuse';

/** Ends the call: the refusal goes into the journal, and the caller gets a StepError. */
export function refuse(entry: JournalEntry, r: Refusal): never {
  if (entry.decision !== 'denied') entry.decision = 'refused';
  entry.rule = r.refused.rule;
  entry.reason = r.refused.reason;
  entry.outcome = 'refused';
  entry.error = { code: r.refused.code, message: r.refused.reason };
  throw new StepError(r.refused.code, r.refused.reason, r.refused.rule);
}

export function recordVerdict(entry: JournalEntry, verdict: GateVerdict): void {
  if (verdict.rule) entry.rule = verdict.rule;
  if (verdict.reason) entry.reason = verdict.reason;
  if (verdict.substitutions?.length) entry.substitutions = verdict.substitutions;
  if (verdict.acceptedUntrusted) entry.acceptedUntrusted = verdict.acceptedUntrusted;
  if (!verdict.allow && !verdict.askPerson)
    refuse(entry, { refused: { code: 'Refused', rule: verdict.rule, reason: verdict.reason } });
}

export function recordAnswer(entry: JournalEntry, answer: Approval | Denial): void {
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

/** Of the sends, those the tool failed and those no worker finished, when there were any. */
export function countSends(entry: JournalEntry, c: Pick<JournalEntry, 'toolFailures' | 'lostSends'>): void {
  if (c.toolFailures) entry.toolFailures = c.toolFailures;
  if (c.lostSends) entry.lostSends = c.lostSends;
}

/** What the send did goes into the journal: its output to the caller, any other ending as a StepError. */
export function recordSent(entry: JournalEntry, sent: Recovered, options: CallOptions): unknown {
  entry.attempts = sent.sends;
  entry.recovery = sent.recovery;
  countSends(entry, sent);
  if (sent.outcome === 'refused') refuse(entry, sent);
  entry.outcome = sent.outcome;
  if (sent.outcome !== 'ok') throw new StepError(sent.error.code, sent.error.message, sent.error.rule);
  if (sent.adoptedFrom) entry.adoptedFrom = sent.adoptedFrom;
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
