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
  /** The local activity a budget workflow asks whether a reserve (or a settle it cannot check itself) is the worker's. */
  VerifyBudgetProof: 'verifyBudgetProof',
  /** The local activity a budget workflow asks whether an operator may release a held reservation. */
  AuthorizeBudgetRelease: 'authorizeBudgetRelease',
  /** What the run an operator reset this one from did with each effect, read from its history (common/base-branch.ts). */
  BaseBranch: 'readBaseBranch',
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

/** Messages whose names the worker reads back from a run's history (a reset run's base branch). */
export const UpdateName = {
  /** A person's decision on a waiting call (workflows/escalation.ts). */
  ResolveEscalation: 'resolveEscalation',
} as const;

/**
 * Patch ids guarding changes in the commands a run issues (docs/versioning.md). History format v1
 * started with none: every path before it was removed before the first release.
 */
export const Patch = {
  /**
   * After 0.1.0: a workflow's own gate that refuses a call unless a person lets it through
   * (`allow: false, askPerson: true`) no longer decides it alone; the manifest judges the call
   * first, so its hard limits and data-flow rules refuse before anyone is asked. Runs that reached
   * such a call earlier replay as they ran.
   */
  OwnQuestionJudgedByManifest: 'toolplane-own-question-judged-by-manifest',
  /**
   * After 0.1.0: a call a person lets through despite a violation (a data-flow rule, or what it
   * carries) is sent with the arguments the gate admitted (the trusted values of the protected
   * fields the model retyped, the declared redactions), as an allowed call would be; the effect key
   * follows them. Runs that reached such a call earlier keep sending the model's arguments.
   */
  OverruledCallSendsGatedArgs: 'toolplane-overruled-call-sends-gated-args',
  /**
   * After 0.1.0: an MCP session's call sent without an idempotency key that repeats an earlier call
   * (same tool, same canonical arguments) while that one is in flight or within the tool's
   * `keyless_repeat_window` is answered that call's outcome and sends nothing. Sessions that reached
   * such a call earlier replay sending it again.
   */
  KeylessRepeatAnswered: 'toolplane-keyless-repeat-answered',
  /**
   * After 0.1.0: a call the gate refuses over a value its field rule lets the run's principal vouch for
   * (`principal_confirms`) waits for the principal's answer instead of ending refused. Runs that
   * reached such a refusal earlier replay refusing it.
   */
  PrincipalConfirms: 'toolplane-principal-confirms',
  /**
   * After 0.1.0: a `retry` tool's send is one Temporal attempt, and the workflow sends again itself
   * under the same idempotency key: a send no worker finished (start-to-close or heartbeat timeout)
   * counts against `retry.infrastructure_attempts`, not `retry.maximum_attempts`; the tool's own
   * failures are sent again after a backoff timer. A `reconcile` tool whose lost send did not land is
   * sent again without counting it. Runs that reached such a failure earlier replay as they ran.
   */
  SendsCounted: 'toolplane-sends-counted',
  /**
   * After 0.1.0 (issue 51): the budget workflow counts only the worker's own messages. A reserve is
   * checked by the worker beside it (a local activity) before it counts, a settle opens the
   * reservation's seal, an operator releases with `releaseBudget` and a verified credential, and a
   * fresh start refuses carried state. Budget workflows that took messages earlier replay as they ran.
   */
  BudgetSenderProof: 'toolplane-budget-sender-proof',
  /**
   * After 0.1.0: in a team's own workflow, a phrase the code wrote whose words a tool returned (a hotel
   * named inside a review) is not the code's own words: a protected field judges it as written by no
   * source, as agentRun judges the model's. Runs that judged such a phrase earlier replay as they ran.
   */
  OwnPhrasesJudged: 'toolplane-own-phrases-judged',
  /**
   * After 0.1.0 (issue 50): a run an operator reset asks, before its first effect past the reset
   * point, what its base branch did (one `readBaseBranch` activity), adopts each effect the base
   * completed with the same key and arguments instead of sending it, and lets the tool's recovery
   * decide an effect the base sent without an outcome. The id is suffixed with the question's number
   * in the history (`.1`, `.2` for a reset of a reset past its own question). A run never reset
   * records no marker. Reset runs that went past their reset point earlier replay sending again.
   */
  ResetAdopts: 'toolplane-reset-adopts',
  /**
   * After 0.1.0 (issue 50): a reset run that began a call in the part Temporal copied (its first send
   * before the reset point) asks its base branch again before each further send, and adopts the
   * outcome the base completed under the key instead of sending. Reset runs that resent such a call
   * earlier replay as they ran; a run never reset records no marker.
   */
  ResetResends: 'toolplane-reset-resends',
  /**
   * After 0.1.0 (issue 52): an MCP session's call of a `requires_request` tool runs without asking the
   * principal when the request the host declared with it (`Toolplane-Request`) names the tool in its
   * `tools` (common/declared-request.ts). Sessions that asked about such a call earlier replay asking.
   */
  DeclaredRequestNamesTools: 'toolplane-declared-request-names-tools',
} as const;
