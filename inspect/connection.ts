// Client side: reaching a Temporal frontend, and the Web UI link of a run.
import { Connection } from '@temporalio/client';
import { ToolplaneError } from '../catalog/errors';

export class TemporalUnreachable extends ToolplaneError<'TemporalUnreachable', { address: string }> {
  constructor(
    readonly address: string,
    cause: string,
  ) {
    super('TemporalUnreachable', `Temporal server at ${address} is unreachable: ${cause}`, { address });
  }
}

export function runUrl(
  server: { uiUrl?: string; namespace: string },
  workflowId: string,
  runId?: string,
): string | undefined {
  if (!server.uiUrl) return undefined;
  const base = `${server.uiUrl.replace(/\/$/, '')}/namespaces/${encodeURIComponent(server.namespace)}/workflows/${encodeURIComponent(workflowId)}`;
  return runId ? `${base}/${runId}/history` : base;
}

/** Fails in seconds, not minutes, when nothing answers. */
export async function probe(address: string, timeoutMs = 5000): Promise<void> {
  let connection: Connection | undefined;
  try {
    connection = await Connection.connect({ address, connectTimeout: timeoutMs });
    await connection.workflowService.getSystemInfo({});
  } catch (err) {
    throw new TemporalUnreachable(address, (err as Error).message.split('\n')[0] ?? String(err));
  } finally {
    await connection?.close();
  }
}
