// Workflow-safe: a person decides what happens to a call whose outcome is unknown, or whether a
// call the gate questioned may go ahead.
import { defineQuery, defineUpdate } from '@temporalio/workflow';

export type EscalationDecision =
  | { effectKey: string; decision: 'retry'; by?: string }
  | { effectKey: string; decision: 'landed'; output: unknown; by?: string }
  | { effectKey: string; decision: 'abort'; by?: string; reason?: string }
  | { effectKey: string; decision: 'approve'; by?: string; reason?: string }
  | { effectKey: string; decision: 'deny'; by?: string; reason?: string };

/** Which decisions answer which question. */
export const DECISIONS: Record<PendingEscalation['kind'], readonly EscalationDecision['decision'][]> = {
  in_doubt: ['retry', 'landed', 'abort'],
  approval: ['approve', 'deny'],
};

export interface PendingEscalation {
  effectKey: string;
  toolId: string;
  position: number;
  reason: string;
  /** Workflow time (ms) after which the call fails as InDoubt. */
  deadline: number;
  kind: 'in_doubt' | 'approval';
}

/** The failure type of a decision the run refuses: no call waits under its key, or it answers another question. */
export const DECISION_REJECTED = 'DecisionRejected';

export const resolveEscalation = defineUpdate<{ accepted: true }, [EscalationDecision]>('resolveEscalation');
export const pendingEscalations = defineQuery<PendingEscalation[]>('pendingEscalations');
