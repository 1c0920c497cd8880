/**
 * A real multi-service Temporal cluster on this machine, without Docker: PostgreSQL, the
 * frontend, history, matching and worker services of temporal-server as separate processes
 * (config: cluster/config/toolplane.yaml, shared with docker-compose.yml), and the Web UI.
 * `startCluster()` brings it up and returns a handle that kills and restarts single services,
 * for the cluster tests and the chaos campaign; `npm run cluster` (scripts/cluster.ts) wraps it.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Connection, type ConnectionOptions } from '@temporalio/client';
import { ensureClusterBinaries, type ClusterBinaries } from './binaries';
import { CERT_ROLES, ensureCredentials, roleEnv, type ClusterCredentials, type Role } from './credentials';
import { ClusterFailed } from './errors';
import { setupNamespace } from './namespace';
import { ensurePostgres, Postgres, postgresDataDir } from './postgres';
import { ManagedProcess, portOpen } from './process';
import { setupSchemas } from './schema';

export { ClusterFailed } from './errors';
export type { ClusterCredentials, Role } from './credentials';

const repoRoot = path.resolve(__dirname, '..', '..');
export const CLUSTER_CONFIG_DIR = path.join(repoRoot, 'cluster', 'config');

export const TEMPORAL_SERVICES = ['history', 'matching', 'frontend', 'worker'] as const;
export type TemporalService = (typeof TEMPORAL_SERVICES)[number];
export type ClusterProcess = TemporalService | 'postgres' | 'ui';

export interface ClusterOptions {
  /** Where PostgreSQL's data, the logs and the UI's config live; reused by the next start. */
  dataDir: string;
  /** The frontend's gRPC port (TEMPORAL_ADDRESS); a free one when omitted. */
  frontendPort?: number;
  /** The Web UI's port; a free one when omitted. */
  uiPort?: number;
  /** Without the Web UI (the tests do not need it). */
  ui?: boolean;
  namespace?: string;
  /**
   * Today's open cluster: no TLS, no tokens, every caller may do everything. By default the cluster
   * is secured (mutual TLS, tokens, toolplane's authorizer; see credentials.ts).
   */
  insecure?: boolean;
  /** Where the CA, certificates, JWKS and tokens live; `<dataDir>/credentials` by default. */
  credentialsDir?: string;
  log?: (line: string) => void;
}

/** What both `Connection.connect` and `NativeConnection.connect` take: the address, TLS, a token. */
export type ClusterConnectOptions = Pick<ConnectionOptions, 'address' | 'tls'> & { apiKey?: string };

export interface Cluster {
  /** host:port of the frontend. */
  address: string;
  namespace: string;
  /** The CA, certificates and tokens of a secured cluster; undefined when it runs open (`insecure`). */
  credentials?: ClusterCredentials;
  /**
   * What `Connection.connect` and `NativeConnection.connect` take to reach the frontend as `role`
   * (TLS with the client certificate, the role's token); just the address on an open cluster.
   */
  connectOptions(role: Role): ClusterConnectOptions;
  /** The same as environment variables (TEMPORAL_ADDRESS, TEMPORAL_TLS_*, TEMPORAL_API_KEY), for a child process. */
  env(role: Role): Record<string, string>;
  uiUrl?: string;
  /** Whether this start created the database (cold) or reused it (warm). */
  cold: boolean;
  /** Milliseconds from the call to a cluster that starts workflows. */
  startMs: number;
  dataDir: string;
  logDir: string;
  processes(): ClusterProcess[];
  /** SIGKILL one process (and what it spawned), waiting until it is gone. */
  kill(name: ClusterProcess): Promise<void>;
  /** Start it again and wait until it serves. */
  restart(name: ClusterProcess): Promise<void>;
  /** Wait until the frontend answers and a workflow can be started. */
  waitReady(timeoutMs?: number): Promise<void>;
  /** Everything down: UI and services with SIGTERM, PostgreSQL last. */
  stop(): Promise<void>;
}

interface Ports {
  pg: number;
  frontend: number;
  frontendHttp: number;
  ui: number;
  grpc: Record<TemporalService, number>;
  membership: Record<TemporalService, number>;
}

/** A port that binds now, below 32768: Temporal stores membership ports as a PostgreSQL smallint. */
async function freeLowPort(): Promise<number> {
  for (;;) {
    const port = 10_000 + Math.floor(Math.random() * 22_000);
    const ok = await new Promise<boolean>((resolve) => {
      const srv = net.createServer();
      srv.once('error', () => resolve(false));
      srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
    });
    if (ok) return port;
  }
}

async function allocatePorts(opts: ClusterOptions): Promise<Ports> {
  const taken = new Set<number>();
  const free = async (): Promise<number> => {
    for (;;) {
      const p = await freeLowPort();
      if (!taken.has(p)) {
        taken.add(p);
        return p;
      }
    }
  };
  const frontend = opts.frontendPort ?? (await free());
  taken.add(frontend);
  const ui = opts.uiPort ?? (await free());
  taken.add(ui);
  const grpc = { frontend } as Record<TemporalService, number>;
  const membership = {} as Record<TemporalService, number>;
  for (const s of TEMPORAL_SERVICES) {
    if (s !== 'frontend') grpc[s] = await free();
    membership[s] = await free();
  }
  return { pg: await free(), frontend, frontendHttp: await free(), ui, grpc, membership };
}

function serviceEnv(ports: Ports, credentials: ClusterCredentials | undefined): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...(credentials
      ? {
          TOOLPLANE_CREDENTIALS: credentials.dir,
          TOOLPLANE_JWKS: `file://${credentials.jwks}`,
          TOOLPLANE_CERT_ROLES: CERT_ROLES,
        }
      : { TOOLPLANE_INSECURE: '1' }),
    TOOLPLANE_PG_HOST: '127.0.0.1',
    TOOLPLANE_PG_PORT: String(ports.pg),
    TOOLPLANE_BIND_ON_IP: '127.0.0.1',
    TOOLPLANE_BROADCAST_ADDRESS: '127.0.0.1',
    TOOLPLANE_FRONTEND_ADDRESS: `127.0.0.1:${ports.frontend}`,
    TOOLPLANE_FRONTEND_HTTP_PORT: String(ports.frontendHttp),
    TOOLPLANE_DYNAMIC_CONFIG: path.join(CLUSTER_CONFIG_DIR, 'dynamicconfig', 'toolplane.yaml'),
    TOOLPLANE_LOG_LEVEL: process.env.TOOLPLANE_CLUSTER_LOG_LEVEL ?? 'warn',
  };
  for (const s of TEMPORAL_SERVICES) {
    env[`TOOLPLANE_${s.toUpperCase()}_PORT`] = String(ports.grpc[s]);
    env[`TOOLPLANE_${s.toUpperCase()}_MEMBERSHIP_PORT`] = String(ports.membership[s]);
  }
  return env;
}

/** The UI server reads its config from <root>/config/<env>.yaml: a copy of the module's own. */
function uiRoot(bins: ClusterBinaries, dataDir: string): string {
  const root = path.join(dataDir, 'ui');
  const config = path.join(root, 'config');
  fs.mkdirSync(config, { recursive: true });
  for (const f of fs.readdirSync(path.join(bins.uiModuleDir, 'config'))) {
    const dest = path.join(config, f);
    fs.copyFileSync(path.join(bins.uiModuleDir, 'config', f), dest);
    fs.chmodSync(dest, 0o644);
  }
  return root;
}

/** The options that reach the frontend as `role`. */
function connectOptionsFor(
  address: string,
  credentials: ClusterCredentials | undefined,
  role: Role,
): ClusterConnectOptions {
  if (!credentials) return { address };
  return {
    address,
    tls: {
      serverRootCACertificate: fs.readFileSync(credentials.ca),
      serverNameOverride: 'localhost', // on the certificate; a TLS server name may not be an IP address
      clientCertPair: { crt: fs.readFileSync(credentials.client.cert), key: fs.readFileSync(credentials.client.key) },
    },
    apiKey: credentials.tokens[role],
  };
}

/** The frontend answers a token-holding client (GetSystemInfo through TLS on a secured cluster). */
async function frontendAnswers(options: ClusterConnectOptions): Promise<boolean> {
  let connection: Connection | undefined;
  try {
    connection = await Connection.connect({ ...options, connectTimeout: 2000 });
    await connection.workflowService.getSystemInfo({});
    return true;
  } catch {
    return false;
  } finally {
    await connection?.close().catch(() => undefined);
  }
}

async function waitFor(
  what: string,
  p: ManagedProcess,
  deadline: number,
  ready: () => Promise<boolean>,
): Promise<void> {
  while (Date.now() < deadline) {
    if (!p.running)
      throw new ClusterFailed('service', `${what} exited (${JSON.stringify(p.exit)}):\n${p.tail()}`, p.spec.logFile);
    if (await ready()) return;
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new ClusterFailed('service', `${what} did not come up in time:\n${p.tail()}`, p.spec.logFile);
}

export async function startCluster(opts: ClusterOptions): Promise<Cluster> {
  const started = Date.now();
  const log = opts.log ?? ((l: string) => console.error(`[cluster] ${l}`));
  const namespace = opts.namespace ?? 'default';
  const dataDir = path.resolve(opts.dataDir);
  const logDir = path.join(dataDir, 'logs');
  fs.mkdirSync(logDir, { recursive: true });
  fs.chmodSync(dataDir, 0o755); // PostgreSQL, run as its own user, must reach its folder

  const bins = await ensureClusterBinaries(log);
  const pgBin = ensurePostgres(log);
  const ports = await allocatePorts(opts);
  const address = `127.0.0.1:${ports.frontend}`;
  const credentials = opts.insecure
    ? undefined
    : ensureCredentials(opts.credentialsDir ?? path.join(dataDir, 'credentials'), { namespace, address, log });
  const connectOptions = (role: Role) => connectOptionsFor(address, credentials, role);

  const pg = new Postgres({
    bin: pgBin,
    dataDir: postgresDataDir(dataDir, log),
    port: ports.pg,
    logFile: path.join(logDir, 'postgres.log'),
  });
  const marker = path.join(dataDir, 'schema-ready');
  const cold = !pg.initialized || !fs.existsSync(marker);
  const processes = new Map<ClusterProcess, ManagedProcess>([['postgres', pg.process]]);
  const stopAll = async () => {
    for (const name of ['ui', 'frontend', 'worker', 'matching', 'history'] as const) await processes.get(name)?.stop();
    await processes.get('postgres')?.stop(30_000);
  };

  try {
    if (cold) {
      log(`initialising PostgreSQL (${pgBin}) in ${pg.opts.dataDir}`);
      fs.rmSync(marker, { force: true });
      pg.init();
    }
    await pg.start();
    log(`PostgreSQL on 127.0.0.1:${ports.pg}`);
    setupSchemas({
      sqlTool: bins.sqlTool,
      serverModuleDir: bins.serverModuleDir,
      port: ports.pg,
      fresh: cold,
      logFile: path.join(logDir, 'schema.log'),
    });
    fs.writeFileSync(marker, `temporal-server ${bins.server}\n`);
    // Members of the previous start (other ports) would make the new services wait for them to expire.
    pg.sql('temporal', 'DELETE FROM cluster_membership');

    const env = serviceEnv(ports, credentials);
    for (const s of TEMPORAL_SERVICES) {
      const p = new ManagedProcess({
        name: s,
        command: bins.server,
        args: [
          '--root',
          path.dirname(CLUSTER_CONFIG_DIR),
          '--config',
          'config',
          '--env',
          'toolplane',
          ...(credentials ? [] : ['--allow-no-auth']),
          'start',
          '--service',
          s,
        ],
        env,
        logFile: path.join(logDir, `${s}.log`),
      });
      processes.set(s, p);
    }
    if (opts.ui !== false) {
      const ui = new ManagedProcess({
        name: 'ui',
        command: bins.uiServer,
        args: ['--root', uiRoot(bins, dataDir), '--env', 'docker', 'start'],
        env: {
          ...process.env,
          TEMPORAL_ADDRESS: address,
          TEMPORAL_UI_PORT: String(ports.ui),
          TEMPORAL_CORS_ORIGINS: `http://localhost:${ports.ui}`,
          // Secured: the UI's own certificate, which the server lets read and nothing else.
          ...(credentials
            ? {
                TEMPORAL_TLS_CA: credentials.ca,
                TEMPORAL_TLS_CERT: credentials.ui.cert,
                TEMPORAL_TLS_KEY: credentials.ui.key,
                TEMPORAL_DISABLE_WRITE_ACTIONS: 'true',
              }
            : {}),
        },
        logFile: path.join(logDir, 'ui.log'),
      });
      processes.set('ui', ui);
      ui.start();
    }

    const waitServing = async (name: ClusterProcess, timeoutMs = 120_000): Promise<void> => {
      const p = processes.get(name)!;
      const deadline = Date.now() + timeoutMs;
      if (name === 'postgres') return;
      if (name === 'ui') return waitFor('the Web UI', p, deadline, () => portOpen(ports.ui));
      if (name === 'frontend')
        return waitFor('the frontend', p, deadline, () => frontendAnswers(connectOptions('admin')));
      // The worker service serves no gRPC; its membership port shows it joined.
      const port = name === 'worker' ? ports.membership.worker : ports.grpc[name];
      return waitFor(`the ${name} service`, p, deadline, () => portOpen(port));
    };
    // History first: each service writes the cluster's metadata record on its first start, and
    // first starts at the same moment collide on it (duplicate key, the loser exits).
    processes.get('history')!.start();
    await waitServing('history');
    for (const s of TEMPORAL_SERVICES) processes.get(s)!.start(); // no-op for history, running
    for (const s of TEMPORAL_SERVICES) await waitServing(s);
    await setupNamespace({ connectOptions: connectOptions('admin'), namespace });
    if (processes.has('ui')) await waitServing('ui');

    const startMs = Date.now() - started;
    const uiUrl = processes.has('ui') ? `http://localhost:${ports.ui}` : undefined;
    log(`cluster ready in ${(startMs / 1000).toFixed(1)}s (${cold ? 'cold' : 'warm'}): ${address}`);
    return {
      address,
      namespace,
      credentials,
      connectOptions,
      env: (role) =>
        credentials
          ? roleEnv(credentials, role, address, namespace)
          : { TEMPORAL_ADDRESS: address, TEMPORAL_NAMESPACE: namespace },
      uiUrl,
      cold,
      startMs,
      dataDir,
      logDir,
      processes: () => [...processes.keys()],
      async kill(name) {
        const p = processes.get(name);
        if (!p) throw new ClusterFailed('fault', `no cluster process ${name}`);
        await p.kill();
      },
      async restart(name) {
        if (name === 'postgres') return pg.start();
        const p = processes.get(name);
        if (!p) throw new ClusterFailed('fault', `no cluster process ${name}`);
        p.start();
        await waitServing(name);
      },
      async waitReady(timeoutMs = 120_000) {
        await setupNamespace({ connectOptions: connectOptions('admin'), namespace, timeoutMs });
      },
      stop: stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
