// Workflow-safe, shared by workflows, activities, the worker and the client: the names on the wire.

export const DEFAULT_TASK_QUEUE = 'toolplane';

/** Activity types toolplane registers; history and the journal view read them back. */
export const ActivityName = {
  Authorize: 'authorizeRun',
  Perform: 'performTool',
  Reconcile: 'reconcileTool',
  ModelTurn: 'modelTurn',
  Carried: 'resolveCarried',
  /** The local activity a run asks, before it takes a person's decision, whether that person may decide. */
  AuthorizeDecision: 'authorizeDecision',
  /** Reserves a call's amounts against its principal's budgets across runs (update-with-start). */
  ReserveBudget: 'reserveBudget',
  /** Keeps (the call landed) or gives back (refused, failed) what `reserveBudget` reserved. */
  SettleBudget: 'settleBudget',
} as const;
export type ActivityName = (typeof ActivityName)[keyof typeof ActivityName];

/** Workflow types toolplane's own workflow module exports. */
export const WorkflowName = {
  AgentRun: 'agentRun',
  ToolRun: 'toolRun',
  DelegatedCall: 'delegatedCall',
  /** The long-lived counter of one principal's budgets across runs (`budgetWorkflowId`). */
  BudgetCounter: 'budgetCounter',
} as const;

/**
 * Patch ids guarding changes in the commands a run issues (docs/versioning.md). History format v1
 * has none: every path before it was removed before the first release.
 */
export const Patch = {} as const;
