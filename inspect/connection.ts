/**
 * How toolplane reaches Temporal, for the CLI, the worker, the client helpers and `npm start` alike:
 * a profile of the Temporal config file (`@temporalio/envconfig`), the standard TEMPORAL_* variables
 * over it (CONNECTION_ENV_HELP lists them), and the `--address`, `--namespace`, `--profile` flags
 * over both. Also where that server's Web UI is, the link of a run there, and the flags that reach
 * the same server again from a printed command.
 */
import { Client, Connection, type ConnectionOptions } from '@temporalio/client';
import { loadClientConnectConfig } from '@temporalio/envconfig';
import { ToolplaneError } from '../catalog/errors';
import { ErrorCode } from '../catalog/error-codes';
import { shellWord } from '../common/shell-word';

export const DEFAULT_ADDRESS = '127.0.0.1:7233';
export const DEFAULT_NAMESPACE = 'default';

export class TemporalUnreachable extends ToolplaneError<typeof ErrorCode.TemporalUnreachable, { address: string }> {
  constructor(
    readonly address: string,
    cause: string,
  ) {
    super(ErrorCode.TemporalUnreachable, `Temporal server at ${address} is unreachable: ${cause}`, { address });
  }
}

/** The variables the connection is read from, for a command's help. */
export const CONNECTION_ENV_HELP = `Connection (flags over these variables over the profile of the Temporal config file):
  TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE          the frontend (default 127.0.0.1:7233) and namespace (default "default")
  TEMPORAL_API_KEY                              a token sent as "authorization: Bearer <token>" (TLS is then on)
  TEMPORAL_TLS_CA, TEMPORAL_TLS_CERT, TEMPORAL_TLS_KEY
                                                the server's CA and this client's certificate and key (PEM files);
                                                also as TEMPORAL_TLS_SERVER_CA_CERT_PATH, TEMPORAL_TLS_CLIENT_CERT_PATH,
                                                TEMPORAL_TLS_CLIENT_KEY_PATH (or _DATA), TEMPORAL_TLS_SERVER_NAME, TEMPORAL_TLS
  TEMPORAL_PROFILE, TEMPORAL_CONFIG_FILE        a profile of the Temporal config file (TOML), as --profile
  TEMPORAL_UI_URL                               the Web UI, for printed links`;

/**
 * TEMPORAL_TLS_CA / _CERT / _KEY (the names Temporal's Web UI server and many deployments use) as
 * envconfig's TEMPORAL_TLS_SERVER_CA_CERT_PATH / _CLIENT_CERT_PATH / _CLIENT_KEY_PATH, where those
 * are not set themselves. A certificate without its key, or a key without its certificate, is a
 * usage error naming both variables.
 */
export function tlsAliases(env: Record<string, string>): Record<string, string> {
  const aliases = [
    ['TEMPORAL_TLS_CA', 'TEMPORAL_TLS_SERVER_CA_CERT_PATH'],
    ['TEMPORAL_TLS_CERT', 'TEMPORAL_TLS_CLIENT_CERT_PATH'],
    ['TEMPORAL_TLS_KEY', 'TEMPORAL_TLS_CLIENT_KEY_PATH'],
  ] as const;
  const out = { ...env };
  for (const [short, long] of aliases)
    if (out[short] && !out[long] && !out[long.replace(/_PATH$/, '_DATA')]) out[long] = out[short];
  const cert = out.TEMPORAL_TLS_CLIENT_CERT_PATH ?? out.TEMPORAL_TLS_CLIENT_CERT_DATA;
  const key = out.TEMPORAL_TLS_CLIENT_KEY_PATH ?? out.TEMPORAL_TLS_CLIENT_KEY_DATA;
  if (!cert !== !key)
    throw new ToolplaneError(
      ErrorCode.UsageError,
      `a client certificate needs its key: ${cert ? 'TEMPORAL_TLS_CERT (TEMPORAL_TLS_CLIENT_CERT_PATH) is set, TEMPORAL_TLS_KEY (TEMPORAL_TLS_CLIENT_KEY_PATH) is not' : 'TEMPORAL_TLS_KEY (TEMPORAL_TLS_CLIENT_KEY_PATH) is set, TEMPORAL_TLS_CERT (TEMPORAL_TLS_CLIENT_CERT_PATH) is not'}`,
    );
  return out;
}

/** What a command line may say about the connection; unset fields fall back to the environment and the profile. */
export interface ConnectionFlags {
  address?: string;
  namespace?: string;
  profile?: string;
  /** Base of the server's Web UI, for printed links. */
  uiUrl?: string;
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
  /** Base of the server's Web UI, when known (see `webUiBase`). */
  uiUrl?: string;
}

/**
 * Resolves the connection: flags over TEMPORAL_ADDRESS / TEMPORAL_NAMESPACE / TEMPORAL_API_KEY /
 * TEMPORAL_TLS_* (with the TEMPORAL_TLS_CA / _CERT / _KEY aliases, `tlsAliases`) over the profile (`--profile`, TEMPORAL_PROFILE, else "default") of the config file
 * (TEMPORAL_CONFIG_FILE, else the Temporal CLI's). An unknown profile or an unreadable file is a usage error.
 */
export function connectionSettings(
  flags: ConnectionFlags = {},
  env: NodeJS.ProcessEnv = process.env,
): ConnectionSettings {
  const envVars = tlsAliases(
    Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined)),
  );
  let loaded: ReturnType<typeof loadClientConnectConfig>;
  try {
    loaded = loadClientConnectConfig({ profile: flags.profile, overrideEnvVars: envVars });
  } catch (err) {
    const where = flags.profile ?? env.TEMPORAL_PROFILE;
    throw new ToolplaneError(
      ErrorCode.UsageError,
      `cannot load Temporal connection settings${where ? ` for profile "${where}"` : ''}: ${(err as Error).message}`,
    );
  }
  const o = loaded.connectionOptions;
  const address = flags.address ?? o.address ?? DEFAULT_ADDRESS;
  const uiUrl = webUiBase(address, flags.uiUrl ?? env.TEMPORAL_UI_URL);
  return {
    address,
    namespace: flags.namespace ?? loaded.namespace ?? DEFAULT_NAMESPACE,
    ...(o.tls !== undefined ? { tls: o.tls } : {}),
    ...(o.apiKey !== undefined && typeof o.apiKey === 'string' ? { apiKey: o.apiKey } : {}),
    ...(o.metadata ? { metadata: o.metadata as Record<string, string> } : {}),
    ...((flags.profile ?? env.TEMPORAL_PROFILE) ? { profile: flags.profile ?? env.TEMPORAL_PROFILE } : {}),
    ...(uiUrl ? { uiUrl } : {}),
  };
}

/**
 * Where the Web UI of the server at `address` is: the one configured (`--ui-url`, TEMPORAL_UI_URL)
 * if any; for a server on this machine at port P, the Temporal CLI dev server's UI at P + 1000 (its
 * `--ui-port` default, which `npm start` keeps); for Temporal Cloud, https://cloud.temporal.io.
 * Otherwise unknown: a self-hosted server's UI is wherever it was deployed.
 */
export function webUiBase(address: string, configured?: string): string | undefined {
  if (configured) return configured.replace(/\/+$/, '');
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d+)$/.exec(address.trim());
  if (!m) return undefined;
  const host = (m[1] ?? m[2]!).toLowerCase();
  const port = Number(m[3]);
  if (['localhost', '127.0.0.1', '::1', '0.0.0.0'].includes(host) && port + 1000 <= 65535)
    return `http://localhost:${port + 1000}`;
  if (host.endsWith('.tmprl.cloud') || host.endsWith('.api.temporal.io')) return 'https://cloud.temporal.io';
  return undefined;
}

/**
 * The connection flags a printed command needs to reach the same server: the profile named, and the
 * address and namespace where they are not the defaults. Secrets (an API key, TLS files) are never
 * printed: a profile or the environment carries them.
 */
export function connectionArgs(s: Pick<ConnectionSettings, 'address' | 'namespace' | 'profile'>): string[] {
  return [
    ...(s.profile ? ['--profile', s.profile] : []),
    ...(s.address !== DEFAULT_ADDRESS ? ['--address', s.address] : []),
    ...(s.namespace !== DEFAULT_NAMESPACE ? ['--namespace', s.namespace] : []),
  ].map(shellWord);
}

export { shellWord };

/** The options both `Connection.connect` and `NativeConnection.connect` take. */
export function connectOptions(s: ConnectionSettings) {
  return {
    address: s.address,
    ...(s.tls !== undefined ? { tls: s.tls } : {}),
    ...(s.apiKey ? { apiKey: s.apiKey } : {}),
    ...(s.metadata ? { metadata: s.metadata } : {}),
  };
}

/**
 * A client on the resolved connection; fails in seconds, as TemporalUnreachable, when nothing answers.
 *
 * @example A client of a secured cluster, from TEMPORAL_ADDRESS, TEMPORAL_TLS_* and TEMPORAL_API_KEY:
 * ```ts
 * import { connectClient, connectionSettings } from 'toolplane/client';
 * const client = await connectClient(connectionSettings());
 * ```
 */
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

/**
 * Fails in seconds, not minutes, when nothing answers: at `address` with no credentials, or with
 * the settings given (TLS, token).
 */
export async function probe(to: string | ConnectionSettings, timeoutMs = 5000): Promise<void> {
  const s = typeof to === 'string' ? { address: to, namespace: DEFAULT_NAMESPACE } : to;
  const client = await connectClient(s, timeoutMs);
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
