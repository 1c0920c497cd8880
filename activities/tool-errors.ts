// What a tool throws to say how it failed; the tool activity turns these into typed failures.
import { FailureType } from '../catalog/failure-types';

export class ToolError extends Error {
  constructor(
    readonly type: FailureType,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = type;
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
