// Workflow-safe: the failure `type`s a tool activity reports, and how recovery treats each.

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
