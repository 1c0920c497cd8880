// Workflow-safe, owned by neither side: the worker's answer to a run (`authorizeRun`) read whole. The
// answer leaves out what its reader restores (format v1's revision after 0.1.0); the run reads it
// here, and so does the worker when it finds a run's ticket in the run's history (run-opening.ts).
import type { ToolDecl } from '../catalog/manifest';
import { withDefaults } from '../catalog/tool-decl-defaults';
import type { RunTicket } from './ticket';
import type { AuthorizeResult } from './wire';

/** The worker's answer whole: what it leaves out because the run restores it (see `AuthorizeResult`). */
export interface ReadAuthority extends Required<Pick<AuthorizeResult, 'grants' | 'capabilities' | 'withheld'>> {
  answer: AuthorizeResult;
  tools: ToolDecl[];
  ticket: RunTicket;
}

/** Restores what the answer left out; an answer recorded whole reads as it was. */
export function readAuthority(answer: AuthorizeResult): ReadAuthority {
  const tools = answer.tools.map(withDefaults);
  return {
    answer,
    tools,
    grants: answer.grants ?? tools.map((t) => t.id),
    capabilities: answer.capabilities ?? [],
    withheld: answer.withheld ?? { grants: [], capabilities: [] },
    ticket: { ...answer.ticket, identity: answer.ticket.identity ?? answer.identity },
  };
}
