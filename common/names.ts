// Workflow-safe, shared by workflows, activities, the worker and the client: the names on the wire.

export const DEFAULT_TASK_QUEUE = 'toolplane';

/** Activity types toolplane registers; history and the journal view read them back. */
export const ActivityName = {
  Authorize: 'authorizeRun',
  Perform: 'performTool',
  Reconcile: 'reconcileTool',
  ModelTurn: 'modelTurn',
} as const;
export type ActivityName = (typeof ActivityName)[keyof typeof ActivityName];

/** Workflow types toolplane's own workflow module exports. */
export const WorkflowName = {
  AgentRun: 'agentRun',
  ToolRun: 'toolRun',
  DelegatedCall: 'delegatedCall',
} as const;

/** Patch ids guarding changes in the commands a run issues; running histories keep their path. */
export const Patch = {
  /** The run asks the worker what it may do before anything else. */
  WorkerAuthority: 'toolplane-worker-authority',
  /**
   * The worker answers what the run may hold in a local activity, on the worker running the
   * workflow task: no round trip through the server before the first call. It implies
   * WorkerAuthority and LongRuns, whose markers a new run no longer writes.
   */
  LocalAuthority: 'toolplane-local-authority',
  /**
   * Model turns send the conversation by reference and the tools by digest; the run continues as
   * new when its history grows long, and returns a journal summary beside this run's entries.
   */
  LongRuns: 'toolplane-long-runs',
  /**
   * The run publishes ToolplaneRefusals / ToolplaneWaitingFor from its first call on. Runs recorded
   * with it still replay that way; new runs publish on change (StatusOnChange).
   */
  OperatorStatus: 'toolplane-operator-status',
  /**
   * The run upserts ToolplaneRefusals / ToolplaneWaitingFor only when they change from their values
   * at start; its marker is written at the first change, so a run with nothing to report has none.
   */
  StatusOnChange: 'toolplane-status-on-change',
} as const;
