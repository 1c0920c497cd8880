/**
 * How toolplane reaches Temporal, for the CLI and the worker alike: a profile of the Temporal
 * config file (`@temporalio/envconfig`), the standard TEMPORAL_* variables over it, and the
 * `--address`, `--namespace`, `--profile` flags over both. Also the Web UI link of a run.
 */
import { Client, Connection, type ConnectionOptions } from '@temporalio/client';
import { loadClientConnectConfig } from '@temporalio/envconfig';
import { ToolplaneError } from '../catalog/errors';

export const DEFAULT_ADDRESS = '127.0.0.1:7233';
export const DEFAULT_NAMESPACE = 'default';

export class TemporalUnreachable extends ToolplaneError<'TemporalUnreachable', { address: string }> {
  constructor(
    readonly address: string,
    cause: string,
  ) {
    super('TemporalUnreachable', `Temporal server at ${address} is unreachable: ${cause}`, { address });
  }
}

/** What a command line may say about the connection; unset fields fall back to the environment and the profile. */
export interface ConnectionFlags {
  address?: string;
  namespace?: string;
  profile?: string;
}

/** Everything needed to open a client or a worker connection. */
export interface ConnectionSettings {
  address: string;
  namespace: string;
  tls?: ConnectionOptions['tls'];
  apiKey?: string;
  metadata?: Record<string, string>;
  /** The profile the settings came from, when the config file had one. */
  profile?: string;
}

/**
 * Resolves the connection: flags over TEMPORAL_ADDRESS / TEMPORAL_NAMESPACE / TEMPORAL_API_KEY /
 * TEMPORAL_TLS_* over the profile (`--profile`, TEMPORAL_PROFILE, else "default") of the config file
 * (TEMPORAL_CONFIG_FILE, else the Temporal CLI's). An unknown profile or an unreadable file is a usage error.
 */
export function connectionSettings(
  flags: ConnectionFlags = {},
  env: NodeJS.ProcessEnv = process.env,
): ConnectionSettings {
  const envVars = Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
  let loaded: ReturnType<typeof loadClientConnectConfig>;
  try {
    loaded = loadClientConnectConfig({ profile: flags.profile, overrideEnvVars: envVars });
  } catch (err) {
    const where = flags.profile ?? env.TEMPORAL_PROFILE;
    throw new ToolplaneError(
      'UsageError',
      `cannot load Temporal connection settings${where ? ` for profile "${where}"` : ''}: ${(err as Error).message}`,
    );
  }
  const o = loaded.connectionOptions;
  return {
    address: flags.address ?? o.address ?? DEFAULT_ADDRESS,
    namespace: flags.namespace ?? loaded.namespace ?? DEFAULT_NAMESPACE,
    ...(o.tls !== undefined ? { tls: o.tls } : {}),
    ...(o.apiKey !== undefined && typeof o.apiKey === 'string' ? { apiKey: o.apiKey } : {}),
    ...(o.metadata ? { metadata: o.metadata as Record<string, string> } : {}),
    ...((flags.profile ?? env.TEMPORAL_PROFILE) ? { profile: flags.profile ?? env.TEMPORAL_PROFILE } : {}),
  };
}

/** The options both `Connection.connect` and `NativeConnection.connect` take. */
export function connectOptions(s: ConnectionSettings) {
  return {
    address: s.address,
    ...(s.tls !== undefined ? { tls: s.tls } : {}),
    ...(s.apiKey ? { apiKey: s.apiKey } : {}),
    ...(s.metadata ? { metadata: s.metadata } : {}),
  };
}

/** A client on the resolved connection; fails in seconds, as TemporalUnreachable, when nothing answers. */
export async function connectClient(s: ConnectionSettings, timeoutMs = 5000): Promise<Client> {
  let connection: Connection | undefined;
  try {
    connection = await Connection.connect({ ...connectOptions(s), connectTimeout: timeoutMs });
    await connection.workflowService.getSystemInfo({});
  } catch (err) {
    await connection?.close().catch(() => undefined);
    throw new TemporalUnreachable(s.address, firstLine(err));
  }
  return new Client({ connection, namespace: s.namespace });
}

function firstLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0] ?? String(err);
}

/** Fails in seconds, not minutes, when nothing answers. */
export async function probe(address: string, timeoutMs = 5000): Promise<void> {
  const client = await connectClient({ address, namespace: DEFAULT_NAMESPACE }, timeoutMs);
  await client.connection.close();
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
