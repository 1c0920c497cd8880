/**
 * The cluster's Go binaries: temporal-server and its SQL tool (go.temporal.io/server), and the
 * Web UI server (github.com/temporalio/ui-server), built from the Go module proxy with
 * CGO_ENABLED=0 and cached outside the clone beside the Temporal CLI. A cached binary is reused;
 * a missing one is built with its progress shown (a cold server build takes minutes).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cacheRoot, isExecutable, onPath, runShown } from '../temporal-cli';
import { ClusterFailed } from './errors';

export const TEMPORAL_SERVER_VERSION = '1.29.7';
export const UI_SERVER_VERSION = '2.42.1';

type Log = (line: string) => void;

export interface ClusterBinaries {
  /** temporal-server (`cmd/server`). */
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

export async function ensureClusterBinaries(log: Log): Promise<ClusterBinaries> {
  const serverDir = serverCacheDir();
  const server = path.join(serverDir, 'server');
  const sqlTool = path.join(serverDir, 'sql');
  if (!isExecutable(server) || !isExecutable(sqlTool)) {
    await goInstall(
      serverDir,
      [
        `go.temporal.io/server/cmd/server@v${TEMPORAL_SERVER_VERSION}`,
        `go.temporal.io/server/cmd/tools/sql@v${TEMPORAL_SERVER_VERSION}`,
      ],
      log,
    );
  }
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
