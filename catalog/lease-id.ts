// Workflow-safe: the lease id, written here once. The run takes a lease for an extension tool's call
// (`lease:<plugin>:<position>`); the worker checks that the lease a call carries is one for that
// tool's extension before it starts anything.
import { isExtensionTool, serverOf } from './tool-id';

const PREFIX = 'lease:';

/** The lease a call at `position` of the run takes for the extension that owns `toolId`. */
export function leaseId(toolId: string, position: number): string {
  return `${PREFIX}${serverOf(toolId)}:${position}`;
}

/** The extension and position a lease id names, or undefined for a string that is no lease id. */
export function parseLeaseId(lease: string): { plugin: string; position: number } | undefined {
  if (!lease.startsWith(PREFIX)) return undefined;
  const rest = lease.slice(PREFIX.length);
  const at = rest.lastIndexOf(':');
  const position = rest.slice(at + 1);
  if (at <= 0 || !/^\d+$/.test(position)) return undefined;
  return { plugin: rest.slice(0, at), position: Number(position) };
}

/** Whether `lease` is a lease on the extension that owns `toolId`. */
export function isLeaseFor(lease: string | undefined, toolId: string): boolean {
  const parsed = lease === undefined ? undefined : parseLeaseId(lease);
  return isExtensionTool(toolId) && parsed?.plugin === serverOf(toolId);
}
