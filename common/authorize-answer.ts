// Workflow-safe, owned by neither side: the worker's answer to a run (`authorizeRun`) read whole. The
// answer leaves out what its reader restores (format v1's revision after 0.1.0); the run reads it
// here, and so does the worker when it finds a run's ticket in the run's history (run-opening.ts).
import type { ToolDecl } from '../catalog/manifest';
import { withDefaults } from '../catalog/tool-decl-defaults';
import type { RunIdentity, RunTicket } from './ticket';
import type { AuthorizeResult } from './wire';

/** The worker's answer whole: what it leaves out because the run restores it (see `AuthorizeResult`). */
export interface ReadAuthority extends Required<Pick<AuthorizeResult, 'grants' | 'capabilities' | 'withheld'>> {
  answer: AuthorizeResult;
  principal: string;
  /** Absent only when neither the answer nor the run's request names one (the worker's reading of an opening). */
  manifestDigest?: string;
  identity: RunIdentity;
  tools: ToolDecl[];
  ticket: RunTicket;
}

/** The identity with its groups restored (an answer leaves out an empty list). */
function identityOf(identity: AuthorizeResult['identity']): RunIdentity {
  return identity.groups ? (identity as RunIdentity) : { ...identity, groups: [] };
}

/**
 * Restores what the answer left out; an answer recorded whole reads as it was. `pinned` is the manifest
 * digest the run's request named: an answer leaves its own out when it is that one.
 */
export function readAuthority(answer: AuthorizeResult, pinned?: string): ReadAuthority {
  const tools = answer.tools.map(withDefaults);
  const identity = identityOf(answer.identity);
  const manifestDigest = answer.manifestDigest ?? pinned;
  return {
    answer,
    principal: answer.principal ?? identity.principal,
    ...(manifestDigest !== undefined ? { manifestDigest } : {}),
    identity,
    tools,
    grants: answer.grants ?? tools.map((t) => t.id),
    capabilities: answer.capabilities ?? [],
    withheld: answer.withheld ?? { grants: [], capabilities: [] },
    ticket: { ...answer.ticket, identity: answer.ticket.identity ? identityOf(answer.ticket.identity) : identity },
  };
}
