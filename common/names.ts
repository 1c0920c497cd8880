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
} as const;
export type ActivityName = (typeof ActivityName)[keyof typeof ActivityName];

/** Workflow types toolplane's own workflow module exports. */
export const WorkflowName = {
  AgentRun: 'agentRun',
  ToolRun: 'toolRun',
  DelegatedCall: 'delegatedCall',
} as const;

/**
 * Patch ids guarding changes in the commands a run issues (docs/versioning.md). History format v1
 * has none: every path before it was removed before the first release.
 */
export const Patch = {} as const;
