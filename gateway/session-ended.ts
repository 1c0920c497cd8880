// When a session's run no longer serves calls: the typed error the gateway answers with, and how
// Temporal's answers say so (no running run yet, or the run closed).
import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  isGrpcServiceError,
} from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { ErrorCode } from '../catalog/error-codes';
import { ToolplaneError } from '../catalog/errors';

/** A session whose run ended (ended by its client, idled out, or failed): its id serves no more calls. */
export class SessionEnded extends ToolplaneError<typeof ErrorCode.SessionEnded, { sessionId: string }> {
  constructor(sessionId: string, message: string) {
    super(ErrorCode.SessionEnded, message, { sessionId });
  }
}

/** gRPC NOT_FOUND: an update to a run that closed meanwhile. */
const NOT_FOUND = 5;

const notFound = (err: unknown): boolean =>
  err instanceof WorkflowNotFoundError ||
  (isGrpcServiceError(err) && Number(err.code) === NOT_FOUND) ||
  (err instanceof Error && isGrpcServiceError(err.cause) && Number(err.cause.code) === NOT_FOUND);

/** The session has no running run (none yet, or it closed): Temporal's NOT_FOUND for an update. */
export function notRunning(err: unknown): boolean {
  return notFound(err);
}

/** `err` as the session's end, or undefined when it says something else. */
export function ended(sessionId: string, err: unknown): SessionEnded | undefined {
  const closed =
    err instanceof WorkflowExecutionAlreadyStartedError ||
    (err instanceof WorkflowUpdateFailedError &&
      err.cause instanceof ApplicationFailure &&
      err.cause.type === ErrorCode.SessionEnded) ||
    notFound(err);
  return closed
    ? new SessionEnded(sessionId, `MCP session ${sessionId} has ended; start a new session (initialize again)`)
    : undefined;
}
