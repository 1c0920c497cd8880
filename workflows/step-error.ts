// Workflow-safe: how a tool step ends when it does not produce output.
import { errorBrand, hasBrand } from '../catalog/error-brand';
import { StepErrorCode } from '../catalog/error-codes';
import { ToolplaneError } from '../catalog/errors';

export { StepErrorCode };

const BRAND = errorBrand('StepError');

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
    return hasBrand(err, BRAND);
  }
}
