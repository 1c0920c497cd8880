/**
 * The cluster's Go binaries: the server (`cluster/authorizer/`: Temporal's server, go.temporal.io/server
 * at the version its go.mod pins, with toolplane's authorizer), Temporal's SQL tool, and the Web UI
 * server (github.com/temporalio/ui-server), built from the Go module proxy with CGO_ENABLED=0 and
 * cached outside the clone beside the Temporal CLI. A cached binary is reused (the server's cache
 * key is a digest of its Go sources, so a changed authorizer is built again); a missing one is built
 * with its progress shown (a cold server build takes minutes).
 */
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cacheRoot, isExecutable, onPath, runShown } from '../temporal-cli';
import { ClusterFailed } from './errors';

export const TEMPORAL_SERVER_VERSION = '1.29.7';
export const UI_SERVER_VERSION = '2.42.1';

type Log = (line: string) => void;

export interface ClusterBinaries {
  /** toolplane-temporal-server (`cluster/authorizer/`): temporal-server's arguments, toolplane's authorizer. */
  server: string;
  /** temporal-sql-tool (`cmd/tools/sql`). */
  sqlTool: string;
  /** ui-server (`cmd/server` of ui-server). */
  uiServer: string;
  /** The server module's source in the Go module cache: its `schema/` and `config/`. */
  serverModuleDir: string;
  /** The ui-server module's source: its `config/`. */
  uiModuleDir: string;
}

export function serverCacheDir(): string {
  return path.join(cacheRoot(), 'temporal-server', TEMPORAL_SERVER_VERSION);
}

/** The server's Go module: a main over go.temporal.io/server with toolplane's authorizer. */
export const AUTHORIZER_DIR = path.resolve(__dirname, '..', '..', 'cluster', 'authorizer');

/** A digest of what the server binary is built from: go.mod, go.sum and the non-test Go files. */
export function authorizerDigest(): string {
  const h = crypto.createHash('sha256');
  const files = fs
    .readdirSync(AUTHORIZER_DIR)
    .filter((f) => f === 'go.mod' || f === 'go.sum' || (f.endsWith('.go') && !f.endsWith('_test.go')))
    .sort();
  for (const f of files)
    h.update(f)
      .update('\0')
      .update(fs.readFileSync(path.join(AUTHORIZER_DIR, f)))
      .update('\0');
  return h.digest('hex').slice(0, 16);
}

export function authorizerCacheDir(): string {
  return path.join(cacheRoot(), 'toolplane-server', `${TEMPORAL_SERVER_VERSION}-${authorizerDigest()}`);
}

export function uiCacheDir(): string {
  return path.join(cacheRoot(), 'ui-server', UI_SERVER_VERSION);
}

function goCommand(): string {
  const go = onPath('go');
  if (!go)
    throw new ClusterFailed(
      'binaries',
      'Go is not on PATH; it builds temporal-server and ui-server (install Go 1.24 or newer, e.g. `apt-get install golang`)',
    );
  return go;
}

const goEnv = (gobin?: string): NodeJS.ProcessEnv => ({
  ...process.env,
  CGO_ENABLED: '0',
  GOTOOLCHAIN: 'local',
  ...(gobin ? { GOBIN: gobin } : {}),
});

/** Builds the packages into `dir` (both modules name their binary `server`, so each gets its own). */
async function goInstall(dir: string, packages: string[], log: Log): Promise<void> {
  fs.mkdirSync(dir, { recursive: true });
  log(`building ${packages.join(' ')} into ${dir} (CGO_ENABLED=0; a cold build takes minutes)`);
  const started = Date.now();
  const code = await runShown(goCommand(), ['install', '-v', ...packages], goEnv(dir), log, 'building');
  if (code !== 0) throw new ClusterFailed('binaries', `go install ${packages.join(' ')} exited with ${code}`);
  log(`built in ${Math.round((Date.now() - started) / 1000)}s`);
}

/** The module's source directory, downloading it (source only) when the module cache lacks it. */
function moduleDir(modulePath: string, version: string): string {
  const r = spawnSync(goCommand(), ['mod', 'download', '-json', `${modulePath}@v${version}`], {
    encoding: 'utf8',
    env: goEnv(),
    cwd: os.tmpdir(),
  });
  let dir: string | undefined;
  try {
    dir = (JSON.parse(r.stdout) as { Dir?: string }).Dir;
  } catch {
    dir = undefined;
  }
  if (r.status !== 0 || !dir || !fs.existsSync(dir))
    throw new ClusterFailed('binaries', `go mod download ${modulePath}@v${version} failed: ${r.stderr || r.stdout}`);
  return dir;
}

/** Builds cluster/authorizer/ into `dir` (a temporary name first, so a broken build leaves no binary). */
async function buildAuthorizer(dir: string, log: Log): Promise<string> {
  const goMod = fs.readFileSync(path.join(AUTHORIZER_DIR, 'go.mod'), 'utf8');
  if (!goMod.includes(`go.temporal.io/server v${TEMPORAL_SERVER_VERSION}`))
    throw new ClusterFailed(
      'binaries',
      `${path.join(AUTHORIZER_DIR, 'go.mod')} does not require go.temporal.io/server v${TEMPORAL_SERVER_VERSION}, the version the schemas and docker-compose.yml are for`,
    );
  fs.mkdirSync(dir, { recursive: true });
  const out = path.join(dir, 'toolplane-temporal-server');
  const partial = `${out}.partial-${process.pid}`;
  log(`building the server with toolplane's authorizer (${AUTHORIZER_DIR}) into ${dir} (a cold build takes minutes)`);
  const started = Date.now();
  const code = await runShown(
    goCommand(),
    ['build', '-v', '-o', partial, '.'],
    goEnv(),
    log,
    'building',
    AUTHORIZER_DIR,
  );
  if (code !== 0 || !isExecutable(partial))
    throw new ClusterFailed('binaries', `go build in ${AUTHORIZER_DIR} exited with ${code}`);
  fs.renameSync(partial, out);
  log(`built in ${Math.round((Date.now() - started) / 1000)}s`);
  return out;
}

export async function ensureClusterBinaries(log: Log): Promise<ClusterBinaries> {
  const sqlDir = serverCacheDir();
  const sqlTool = path.join(sqlDir, 'sql');
  if (!isExecutable(sqlTool))
    await goInstall(sqlDir, [`go.temporal.io/server/cmd/tools/sql@v${TEMPORAL_SERVER_VERSION}`], log);
  const serverDir = authorizerCacheDir();
  let server = path.join(serverDir, 'toolplane-temporal-server');
  if (!isExecutable(server)) server = await buildAuthorizer(serverDir, log);
  const uiDir = uiCacheDir();
  const uiServer = path.join(uiDir, 'server');
  if (!isExecutable(uiServer))
    await goInstall(uiDir, [`github.com/temporalio/ui-server/v2/cmd/server@v${UI_SERVER_VERSION}`], log);
  for (const bin of [server, sqlTool, uiServer])
    if (!isExecutable(bin)) throw new ClusterFailed('binaries', `go install left no executable at ${bin}`);
  return {
    server,
    sqlTool,
    uiServer,
    serverModuleDir: moduleDir('go.temporal.io/server', TEMPORAL_SERVER_VERSION),
    uiModuleDir: moduleDir('github.com/temporalio/ui-server/v2', UI_SERVER_VERSION),
  };
}
