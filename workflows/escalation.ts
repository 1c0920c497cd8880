// Workflow-safe: a person decides what happens to a call whose outcome is unknown.
import { defineQuery, defineUpdate } from '@temporalio/workflow';

export type EscalationDecision =
  | { effectKey: string; decision: 'retry'; by?: string }
  | { effectKey: string; decision: 'landed'; output: unknown; by?: string }
  | { effectKey: string; decision: 'abort'; by?: string; reason?: string };

export interface PendingEscalation {
  effectKey: string;
  toolId: string;
  position: number;
  reason: string;
  /** Workflow time (ms) after which the call fails as InDoubt. */
  deadline: number;
  kind: 'in_doubt' | 'approval';
}

export const resolveEscalation = defineUpdate<{ accepted: true }, [EscalationDecision]>('resolveEscalation');
export const pendingEscalations = defineQuery<PendingEscalation[]>('pendingEscalations');
