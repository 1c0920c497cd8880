// Workflow-safe, owned by neither side: the ticket the worker issues a run when it authorizes it,
// and the names of what a ticket permits. The worker alone holds the key its MACs are made with;
// a workflow only carries them, one short MAC per call.

/** Who a run acts for, as the worker established it. */
export interface RunIdentity {
  /** The verified subject (or, on a worker that allows it, the asserted name). */
  principal: string;
  /** The verified token's groups (none for an asserted principal). */
  groups: string[];
  /** The issuer that vouched for the principal; absent when the principal was only asserted. */
  issuer?: string;
}

/**
 * The worker's ticket for one run (workflow id and run id, which the MACs cover and which no request
 * repeats): who it acts for, and a MAC per thing it may reach. Recorded once, with the worker's answer.
 */
export interface RunTicket {
  identity: RunIdentity;
  /** A MAC for each permit (`permitOf…`): what a request carries as its `ticket`. */
  permits: Record<string, string>;
  /** Covers the identity, grants and capabilities: what a continued run or a delegated child shows the worker. */
  carry: string;
}

/**
 * What a run shows the worker to be authorized without a new credential: the ticket of the run it
 * continues (same workflow id), or of the parent that delegates to it. The worker checks the MAC
 * against that run's ids as Temporal reports them, never as the request says.
 */
export interface TicketCarry {
  identity: RunIdentity;
  grants: string[];
  capabilities: string[];
  mac: string;
}

/** The permit a tool call (perform, reconcile, carried content) presents. */
export function toolPermit(toolId: string): string {
  return `tool:${toolId}`;
}

/** The permit a model turn presents. */
export function modelPermit(endpoint: string): string {
  return `model:${endpoint}`;
}

/** The MAC a request presents for a permit; undefined when the ticket does not hold it. */
export function permitMac(ticket: RunTicket | undefined, permit: string): string | undefined {
  if (!ticket) return undefined;
  return Object.prototype.hasOwnProperty.call(ticket.permits, permit) ? ticket.permits[permit] : undefined;
}

/**
 * On the AI SDK path: the `providerOptions` key under which a model call carries its run's principal
 * and ticket MAC (`{ principal, ticket }`); the worker's provider checks and strips it before the send.
 */
export const MODEL_TICKET_OPTIONS = 'toolplane';
