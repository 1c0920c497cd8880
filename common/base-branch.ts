// Workflow-safe, shared by the workflow and the activity that reads it: what the run an operator reset
// this run from (its base branch) did with each effect, as the base's history holds it. A reset run
// asks once, before its first effect past the reset point, and adopts what the base completed.
import type { PerformResult } from './wire';

/** Where the base branch recorded an effect: the run, and the event that holds its outcome (or its schedule). */
export interface BaseEffect {
  runId: string;
  eventId: number;
  /** SHA-256 hex of the canonical JSON of the arguments the base sent. */
  args: string;
}

/**
 * A person's decision the base branch took on one of its waiting calls: the accepted
 * `resolveEscalation` update, and who the run recorded as deciding (its answer: the verified subject
 * where the worker verifies). A reset run takes it for the very same call only (the effect key names
 * the tool, the arguments and the position).
 */
export interface BaseDecision {
  decision: string;
  by?: string;
  /** A confirmation's value. */
  value?: string | number;
  /** An in-doubt call's output, as the person said it landed. */
  output?: unknown;
  reason?: string;
  /** The update's id: Temporal reapplies a base's updates after the reset point, under the same id. */
  updateId?: string;
  runId: string;
  /** The update's completed event in the base run. */
  eventId: number;
}

export interface BaseBranch {
  /** The reset run that asked: a run reset again asks anew. Empty when the question itself failed. */
  forRun: string;
  /** The run this one was reset from (the newest reset in its history), when its history names one. */
  baseRunId?: string;
  /** Effect keys whose send the base branch completed, with what the tool answered. */
  completed: Record<string, BaseEffect & { result: PerformResult }>;
  /** Effect keys the base branch sent without a recorded outcome: the tool may or may not have done them. */
  unknown: Record<string, BaseEffect>;
  /** People's decisions the base branch took, by effect key, oldest first; absent when none (an older worker's answer never has it). */
  decisions?: Record<string, BaseDecision[]>;
  /** Why the base branch could not be read: every effect past the reset point is then of unknown outcome. */
  unreadable?: string;
}

export interface BaseBranchActivities {
  readBaseBranch(): Promise<BaseBranch>;
}
