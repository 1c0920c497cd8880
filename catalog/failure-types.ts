// Workflow-safe: the failure `type`s that cross the workflow/activity boundary, written here once.
// Activities throw them, workflows' retry policies and recovery read them, and users' own retry
// policies name them: these strings are in histories and never change.

/** The failure types a tool activity reports, and how recovery treats each. */

export const FailureType = {
  /** Refused before anything was sent: safe to try again. */
  Rejected: 'ToolRejected',
  /** Reached the provider and failed there: repeated only when `retries_landed` allows. */
  FailedLanded: 'ToolFailedLanded',
  /** The outcome is unknown: recovery decides. */
  InDoubt: 'ToolInDoubt',
  /** The tool is not implemented on this worker, or its lease is missing: never retried. */
  Unavailable: 'ToolUnavailable',
  /** The source serves another definition than the pinned one (a rug pull): refused, nothing sent, never retried. */
  DefinitionChanged: 'ToolDefinitionChanged',
  /** The arguments or the request were wrong: retrying cannot help. */
  Invalid: 'ToolInvalid',
  /** The call landed, but the plane could not store its output: never resent, not the tool's fault. */
  OutputUnstored: 'ToolOutputUnstored',
} as const;
export type FailureType = (typeof FailureType)[keyof typeof FailureType];

/** How a model turn fails: rate limits and server errors are retried; credentials and bad requests are final. */
export const ModelFailureType = {
  /** 401/403, or the key variable the worker names is unset. Final. */
  Auth: 'ModelAuth',
  /** 400, 404, 422 and other client errors: the same request would fail again. Final. */
  RequestInvalid: 'ModelRequestInvalid',
  /** 429: retried, after Retry-After when the provider sends it. */
  RateLimited: 'ModelRateLimited',
  /** 5xx, 408, 409, or the endpoint could not be reached: retried. */
  Unavailable: 'ModelUnavailable',
  /** The endpoint answered something that is not a model response (bad JSON, wrong shape): retried. */
  ResponseMalformed: 'ModelResponseMalformed',
  /** The model's answer is larger than a turn may carry. Final. */
  OutputTooLarge: 'ModelOutputTooLarge',
} as const;
export type ModelFailureType = (typeof ModelFailureType)[keyof typeof ModelFailureType];

/** The model failure types after which the same turn is not sent again. */
export const FINAL_MODEL_FAILURES: readonly ModelFailureType[] = [
  ModelFailureType.Auth,
  ModelFailureType.RequestInvalid,
];

/** The failure types of the run's own steps: what the worker refused, final wherever they arise. */
export const RunFailureType = {
  /** A run asked for what the worker does not declare, or started from carried state. */
  RunRefused: 'RunRefused',
  /** A run's input is malformed. */
  RunInputInvalid: 'RunInputInvalid',
  /** A run named a model endpoint, or a model, the worker does not declare. */
  ModelRefused: 'ModelRefused',
  /** The run's conversation, kept by the worker, cannot be read. */
  TranscriptUnavailable: 'TranscriptUnavailable',
  /** What a call carries beside its arguments could not be resolved. */
  CarriedUnresolved: 'CarriedUnresolved',
  /** The worker cannot count a call against its principal's budgets. */
  BudgetUncountable: 'BudgetUncountable',
  /** The worker refused the run's credential (or its carried ticket). */
  IdentityRefused: 'IdentityRefused',
  /** An extension tool was called without the run's extension-runtime lease. */
  LeaseMissing: 'LeaseMissing',
  /** A decision the run refused: no call waits under its key, or the worker did not accept who decides. */
  DecisionRejected: 'DecisionRejected',
} as const;
export type RunFailureType = (typeof RunFailureType)[keyof typeof RunFailureType];
