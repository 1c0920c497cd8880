// The bound on the MCP sessions one principal holds open (issue 46.4): each holds a run and the spend
// record of its pass until the pass expires, so a bearer holder opening sessions without end is refused.
import { ErrorCode } from '../catalog/error-codes';
import { ToolplaneError } from '../catalog/errors';

/**
 * A new session refused: its principal holds `limit` open sessions already (each holds a run and the
 * spend record of its pass). A call in a session already open is served; one that ends frees a place.
 */
export class SessionLimitReached extends ToolplaneError<
  typeof ErrorCode.SessionLimit,
  { sessionId: string; principal: string; open: number; limit: number }
> {
  constructor(data: { sessionId: string; principal: string; open: number; limit: number }) {
    super(
      ErrorCode.SessionLimit,
      `${data.principal} has ${data.open} open MCP sessions, and this gateway allows ${data.limit} per principal; ` +
        'end one (DELETE it) or wait for one to idle out, then start a new one',
      data,
    );
  }
}

/** How many sessions one principal may hold open at once, by default. */
export const DEFAULT_MAX_OPEN_SESSIONS_PER_PRINCIPAL = 20;
