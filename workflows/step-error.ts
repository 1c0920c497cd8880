// Workflow-safe: how a tool step ends when it does not produce output.

export const StepErrorCode = {
  Unreachable: 'Unreachable',
  InvalidArguments: 'InvalidArguments',
  Refused: 'Refused',
  InDoubt: 'InDoubt',
  Failed: 'Failed',
  Aborted: 'Aborted',
  LimitExceeded: 'LimitExceeded',
  /** An extension tool called by a run without the extension-runtime lease capability. */
  LeaseMissing: 'LeaseMissing',
} as const;
export type StepErrorCode = (typeof StepErrorCode)[keyof typeof StepErrorCode];

const BRAND = Symbol.for('toolplane.StepError');

export class StepError extends Error {
  readonly [BRAND] = true;
  constructor(
    readonly code: StepErrorCode,
    message: string,
    /** The rule that refused, where one did. */
    readonly rule?: string,
  ) {
    super(message);
    this.name = `StepError(${code})`;
  }

  static is(err: unknown): err is StepError {
    return typeof err === 'object' && err !== null && (err as Record<symbol, unknown>)[BRAND] === true;
  }
}
