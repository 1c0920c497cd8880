/**
 * The Temporal server a run talks to: the one TEMPORAL_ADDRESS names, or a dev server started
 * here with a persistent SQLite file. Shared by `npm start`, the tests and the bench.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { registerSearchAttributes } from './cluster/namespace';
import { findTemporalCli } from './temporal-cli';
import { makePrivateDir, PRIVATE_FILE_MODE } from '../activities/data-dir';
import { SEARCH_ATTRIBUTES } from '../common/search-attributes';
import {
  connectionSettings,
  connectOptions,
  probe,
  runUrl,
  TemporalUnreachable,
  type ConnectionSettings,
} from '../inspect/connection';

export { probe, runUrl, TemporalUnreachable };

export interface TemporalServer {
  address: string;
  namespace: string;
  /** How to reach it: the address, and on a secured server the TLS files and token (`connectOptions`). */
  connection?: ConnectionSettings;
  /** Base of the Web UI, when one is known. */
  uiUrl?: string;
  /** Whether this process started the server (and so stops it). */
  owned: boolean;
  stop(): Promise<void>;
}

/** The options `Connection.connect` and `NativeConnection.connect` take to reach `server`. */
export function serverConnectOptions(server: TemporalServer): ReturnType<typeof connectOptions> {
  return server.connection ? connectOptions(server.connection) : { address: server.address };
}

/** Ports this process handed out: the OS may hand a just-closed port out again, to the next caller. */
const handedOut = new Set<number>();

function unusedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/**
 * A port nothing listens on now, and one this process has not handed out before: two servers started
 * side by side (a dev server and its UI, weed's twelve listeners) never get the same one.
 */
export async function freePort(): Promise<number> {
  let port = await unusedPort();
  while (handedOut.has(port)) port = await unusedPort();
  handedOut.add(port);
  return port;
}

export interface DevServerOptions {
  port?: number;
  uiPort?: number;
  /** SQLite file; runs survive a restart of the server. */
  dbFile?: string;
  namespace?: string;
  /** Server log goes here; defaults to a file beside the database. */
  logFile?: string;
  log?: (line: string) => void;
  /** Dynamic config values, such as `system.enableActivityEagerExecution: true`. */
  dynamicConfig?: Record<string, string | number | boolean>;
}

/** Eager activity execution: a workflow task that schedules an activity may carry its first task back to the same worker. */
export const EAGER_ACTIVITIES = { 'system.enableActivityEagerExecution': true } as const;

export function defaultDataDir(): string {
  return process.env.TOOLPLANE_DATA_DIR ?? path.resolve(__dirname, '..', '.data');
}

/** The database and SQLite's files beside it, the owner's only. */
function privateDatabaseFiles(dbFile: string): void {
  for (const f of [dbFile, `${dbFile}-wal`, `${dbFile}-shm`]) if (fs.existsSync(f)) fs.chmodSync(f, PRIVATE_FILE_MODE);
}

export async function startDevServer(opts: DevServerOptions = {}): Promise<TemporalServer> {
  const log = opts.log ?? ((l: string) => console.error(`[dev-server] ${l}`));
  const port = opts.port ?? Number(process.env.TOOLPLANE_DEV_PORT ?? 7233);
  const uiPort = opts.uiPort ?? Number(process.env.TOOLPLANE_UI_PORT ?? port + 1000);
  const namespace = opts.namespace ?? 'default';
  const dbFile = opts.dbFile ?? path.join(defaultDataDir(), 'temporal.sqlite');
  // The database holds every run's history: its folder is the owner's only when it is toolplane's own
  // (the data folder, or one made here); a folder the caller named and that exists is left as it is.
  const dbDir = path.dirname(dbFile);
  if (!fs.existsSync(dbDir) || path.resolve(dbDir) === path.resolve(defaultDataDir())) makePrivateDir(dbDir);
  // The CLI's --search-attribute flags register attributes only in a new database.
  const reopened = fs.existsSync(dbFile);
  // A database an older toolplane left world-readable is narrowed before the server opens it again.
  privateDatabaseFiles(dbFile);
  const logFile = opts.logFile ?? path.join(path.dirname(dbFile), `temporal-${port}.log`);
  const cli = await findTemporalCli(log);

  const args = [
    'server',
    'start-dev',
    '--db-filename',
    dbFile,
    '--port',
    String(port),
    '--ui-port',
    String(uiPort),
    '--namespace',
    namespace,
    '--log-level',
    'warn',
    ...SEARCH_ATTRIBUTES.flatMap((a) => ['--search-attribute', `${a.name}=${a.cliType}`]),
    ...Object.entries(opts.dynamicConfig ?? {}).flatMap(([k, v]) => [
      '--dynamic-config-value',
      `${k}=${JSON.stringify(v)}`,
    ]),
  ];
  const out = fs.openSync(logFile, 'a', PRIVATE_FILE_MODE);
  // The server makes its database (and SQLite its -wal/-shm files) under the umask it inherits:
  // 0077 for the spawn, so they are 0600 whatever the caller's umask.
  const umask = process.umask(0o077);
  let child: ChildProcess;
  try {
    child = spawn(cli.path, args, { stdio: ['ignore', out, out], detached: false });
  } finally {
    process.umask(umask);
  }
  fs.closeSync(out);
  let exited: number | null | undefined;
  child.on('exit', (code) => (exited = code));
  const address = `127.0.0.1:${port}`;

  const deadline = Date.now() + 90_000;
  for (;;) {
    if (exited !== undefined) {
      const tail = fs.readFileSync(logFile, 'utf8').split('\n').slice(-15).join('\n');
      throw new Error(`temporal server start-dev exited with ${exited} before it was ready; log ${logFile}:\n${tail}`);
    }
    try {
      await probe(address, 1000);
      break;
    } catch (err) {
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw err;
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  if (reopened) {
    // A database from an older toolplane lacks the attributes added since; register them as a cluster does.
    const connection = await Connection.connect({ address, connectTimeout: 5000 });
    try {
      await registerSearchAttributes(connection, namespace, Date.now() + 60_000);
    } catch (err) {
      child.kill('SIGKILL');
      throw err;
    } finally {
      await connection.close();
    }
  }
  log(`dev server ready at ${address}, Web UI http://localhost:${uiPort} (db ${dbFile})`);

  return {
    address,
    namespace,
    uiUrl: `http://localhost:${uiPort}`,
    owned: true,
    stop: () => stopChild(child, () => exited !== undefined),
  };
}

async function stopChild(child: ChildProcess, hasExited: () => boolean): Promise<void> {
  if (hasExited()) return;
  const done = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await done;
  clearTimeout(timer);
}

/**
 * The server TEMPORAL_ADDRESS (or TEMPORAL_PROFILE's profile) names, if any, checked to answer, with
 * the TLS files and token of the environment (inspect/connection.ts); otherwise a dev server already
 * listening on the configured port; otherwise a new one.
 */
export async function connectOrStart(opts: DevServerOptions = {}): Promise<TemporalServer> {
  const namespace = process.env.TEMPORAL_NAMESPACE ?? opts.namespace ?? 'default';
  if (process.env.TEMPORAL_ADDRESS || process.env.TEMPORAL_PROFILE) {
    const connection = connectionSettings({ namespace: process.env.TEMPORAL_NAMESPACE ?? opts.namespace });
    await probe(connection);
    return {
      address: connection.address,
      namespace: connection.namespace,
      connection,
      uiUrl: process.env.TEMPORAL_UI_URL,
      owned: false,
      stop: async () => {},
    };
  }
  const port = opts.port ?? Number(process.env.TOOLPLANE_DEV_PORT ?? 7233);
  const uiPort = opts.uiPort ?? Number(process.env.TOOLPLANE_UI_PORT ?? port + 1000);
  const local = `127.0.0.1:${port}`;
  try {
    await probe(local, 1000);
    return {
      address: local,
      namespace,
      uiUrl: process.env.TEMPORAL_UI_URL ?? `http://localhost:${uiPort}`,
      owned: false,
      stop: async () => {},
    };
  } catch {
    return startDevServer({ ...opts, port, uiPort, namespace });
  }
}
