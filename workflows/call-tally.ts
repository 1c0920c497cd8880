// Workflow-safe: how a run's calls were decided so far, as its Current Details count them.
import type { JournalEntry } from '../common/journal';
import { bounded, REASON_CHARS } from './details-text';

const refused = (e: JournalEntry) => e.decision === 'refused' || e.decision === 'denied';

/** How many refused calls Current Details name one by one (the latest); the rest are counted. */
export const REFUSALS_NAMED = 10;

/** A refused or denied call, as Current Details name it. */
export interface RefusedCall {
  position: number;
  toolId: string;
  /** `refused by protected_field:/to`, `denied by approval`. */
  rule: string;
  /** Why, as the journal says it (the amount and the limit of a spend refusal, ...), bounded. */
  reason?: string;
}

/** How the run's calls were decided so far, counted as each call settles (never by rescanning the journal). */
export class CallTally {
  /** Calls in the journal, settled or not. */
  calls = 0;
  approved = 0;
  refusals = 0;
  readonly byRule = new Map<string, number>();
  /** The latest refused calls (at most REFUSALS_NAMED), in the order they were refused. */
  readonly refused: RefusedCall[] = [];
  /** Calls whose trust rules the workflow waived (`acceptUntrusted`), counted. */
  acceptedUntrusted = 0;
  /** The latest of them (at most REFUSALS_NAMED), with the workflow's reason. */
  readonly accepted: { position: number; toolId: string; reason: string }[] = [];

  /** A call entered the journal. */
  opened(): void {
    this.calls++;
  }

  /** A call returned, failed or was refused: its decision is final. */
  settled(e: JournalEntry): void {
    if (e.acceptedUntrusted) {
      this.acceptedUntrusted++;
      this.accepted.push({ position: e.position, toolId: e.toolId, reason: e.acceptedUntrusted.reason });
      if (this.accepted.length > REFUSALS_NAMED) this.accepted.shift();
    }
    if (e.decision === 'approved') this.approved++;
    else if (refused(e)) {
      this.refusals++;
      const rule = `${e.decision} by ${e.rule ?? '?'}`;
      this.byRule.set(rule, (this.byRule.get(rule) ?? 0) + 1);
      this.refused.push({
        position: e.position,
        toolId: e.toolId,
        rule,
        ...(e.reason ? { reason: bounded(e.reason, REASON_CHARS) } : {}),
      });
      if (this.refused.length > REFUSALS_NAMED) this.refused.shift();
    }
  }
}
