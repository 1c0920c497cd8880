// What a tool throws to say how it failed; the tool activity turns these into typed failures.
import { errorBrand, hasBrand } from '../catalog/error-brand';
import { ToolplaneError, type ArgumentProblem } from '../catalog/errors';
import { FailureType } from '../catalog/failure-types';

const BRAND = errorBrand('ToolError');

/** Thrown by tool code; its `code` is the failure type recovery acts on. */
export class ToolError extends ToolplaneError<FailureType> {
  readonly [BRAND] = true;
  constructor(
    type: FailureType,
    message: string,
    readonly details?: unknown,
  ) {
    super(type, message, details);
  }

  get type(): FailureType {
    return this.code;
  }

  static override is(err: unknown): err is ToolError {
    return hasBrand(err, BRAND);
  }
}

/** Nothing reached the provider (validation, a refused connection): safe to retry. */
export class ToolRejected extends ToolError {
  constructor(message: string, details?: unknown) {
    super(FailureType.Rejected, message, details);
  }
}

/** The provider received the call and it failed there. */
export class ToolFailedLanded extends ToolError {
  constructor(message: string, details?: unknown) {
    super(FailureType.FailedLanded, message, details);
  }
}

/** The tool cannot tell whether the call landed (a timeout after sending, a dropped connection). */
export class ToolInDoubt extends ToolError {
  constructor(message: string, details?: unknown) {
    super(FailureType.InDoubt, message, details);
  }
}

export class Cancelled extends ToolError {
  constructor(message = 'cancelled') {
    super(FailureType.Rejected, message);
  }
}

/**
 * A tool that records trusted state refuses a call without a signed `produced_by` (a worker
 * without a ledger key, or a caller that bypassed the plane). Nothing was written; never retried.
 */
export class ProvenanceMissing extends ToolError {
  constructor(toolId: string) {
    super(
      FailureType.Invalid,
      `${toolId} records state later runs may trust and needs a signed produced_by; none was given, so nothing was written`,
    );
  }
}

/**
 * The arguments fail the zod schema of a tool made with `defineTool`; the handler was not called,
 * nothing was sent, and the call is never retried. `data.problems` name each failing field by its
 * JSON pointer.
 */
export class ToolInputInvalid extends ToolError {
  constructor(
    /** The tool whose schema refused the arguments. */
    readonly toolId: string,
    /** Each failing field: its JSON pointer into the arguments and what is wrong. */
    readonly problems: ArgumentProblem[],
  ) {
    super(
      FailureType.Invalid,
      `arguments for ${toolId} fail its input schema, nothing was run: ` +
        problems.map((p) => `${p.pointer || '/'} ${p.message}`).join('; '),
      { toolId, problems },
    );
  }
}
