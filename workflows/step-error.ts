// Workflow-safe: how a tool step ends when it does not produce output.
import { ToolplaneError } from '../catalog/errors';

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
  /** The call landed, but the plane could not keep its output. */
  OutputLost: 'OutputLost',
} as const;
export type StepErrorCode = (typeof StepErrorCode)[keyof typeof StepErrorCode];

const BRAND = Symbol.for('toolplane.StepError');

export class StepError extends ToolplaneError<StepErrorCode> {
  readonly [BRAND] = true;
  constructor(
    code: StepErrorCode,
    message: string,
    /** The rule that refused, where one did. */
    readonly rule?: string,
  ) {
    super(code, message);
    this.name = `StepError(${code})`;
  }

  static override is(err: unknown): err is StepError {
    return typeof err === 'object' && err !== null && (err as Record<symbol, unknown>)[BRAND] === true;
  }
}
