/**
 * Finds or builds SeaweedFS's `weed` (an S3-compatible server), caching it outside the clone, and
 * starts a throwaway single-process SeaweedFS with an S3 gateway for tests.
 *
 * Routes, in order: SEAWEEDFS_WEED, the cache, a build from the Go module proxy.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './dev-server';
import { cacheRoot, isExecutable, onPath, runShown, ToolUnobtainable } from './temporal-cli';

export const SEAWEEDFS_MODULE = 'github.com/seaweedfs/seaweedfs@v0.0.0-20261109003541-7506e5f91cd6';

type Log = (line: string) => void;

export function weedCacheDir(): string {
  return path.join(cacheRoot(), 'seaweedfs');
}

/** The command that obtains `weed`, for messages. */
export const WEED_COMMAND = 'npx tsx scripts/seaweedfs.ts';

export class WeedUnavailable extends ToolUnobtainable<'WeedUnavailable'> {
  constructor(attempts: string[]) {
    super('WeedUnavailable', 'Could not find or build SeaweedFS (weed). Tried:', attempts, [
      'The build needs go on PATH and the Go module proxy; with them, ' +
        `\`${WEED_COMMAND}\` builds it into the cache. Or point SEAWEEDFS_WEED at a weed binary.`,
    ]);
  }
}

function answersVersion(file: string): boolean {
  const r = spawnSync(file, ['version'], { encoding: 'utf8', timeout: 20_000 });
  return r.status === 0 && /version/i.test(r.stdout);
}

/** The weed binary without building anything, or undefined. */
export function cachedWeed(): string | undefined {
  const fromEnv = process.env.SEAWEEDFS_WEED;
  if (fromEnv) return isExecutable(fromEnv) ? fromEnv : undefined;
  const cached = path.join(weedCacheDir(), 'weed');
  return isExecutable(cached) ? cached : undefined;
}

async function build(dest: string, log: Log): Promise<void> {
  const go = onPath('go');
  if (!go) throw new Error('no go on PATH');
  const env = { ...process.env, CGO_ENABLED: '0', GOTOOLCHAIN: process.env.GOTOOLCHAIN ?? 'auto' };
  log(`downloading ${SEAWEEDFS_MODULE} from the Go module proxy`);
  const dl = spawnSync(go, ['mod', 'download', '-json', SEAWEEDFS_MODULE], {
    env,
    encoding: 'utf8',
    maxBuffer: 16 * 1024 * 1024,
  });
  if (dl.status !== 0) throw new Error(`go mod download exited with ${dl.status}: ${dl.stderr.trim() || dl.stdout}`);
  const dir = (JSON.parse(dl.stdout) as { Dir?: string; Error?: string }).Dir;
  if (!dir) throw new Error(`go mod download reported no directory: ${dl.stdout.trim()}`);
  log(`building weed in ${dir} (a cold build takes many minutes)`);
  const code = await runShown(
    go,
    ['-C', dir, 'build', '-o', path.resolve(dest), './weed'],
    { ...env, GOFLAGS: '-mod=mod' },
    (l) => log(l),
    'building weed',
  );
  if (code !== 0) throw new Error(`go build exited with ${code}`);
}

/** True when a process with this pid exists (signal 0 only asks). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A lock whose holder has not touched it for this long is taken to be gone (another machine, a reused pid). */
const LOCK_STALE_MS = 120_000;

/**
 * Holds `<dir>/build.lock` while `fn` runs, so two test runs (two clones, or a test run and
 * `npx tsx scripts/seaweedfs.ts`) on one machine build weed once: the second waits, with progress,
 * and then finds the first one's binary in the cache. A lock whose holder is gone is taken over.
 */
async function withBuildLock<T>(dir: string, log: Log, ready: () => T | undefined, fn: () => Promise<T>): Promise<T> {
  const lock = path.join(dir, 'build.lock');
  const waitingSince = Date.now();
  let lastSaid = 0;
  for (;;) {
    let fd: number | undefined;
    try {
      fd = fs.openSync(lock, 'wx');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    if (fd !== undefined) {
      fs.writeSync(fd, String(process.pid));
      fs.closeSync(fd);
      const touch = setInterval(() => {
        try {
          const now = new Date();
          fs.utimesSync(lock, now, now);
        } catch {
          // removed under us: the build goes on, the cache rename decides
        }
      }, 15_000);
      try {
        // The holder before us may have finished the build while we looked.
        return ready() ?? (await fn());
      } finally {
        clearInterval(touch);
        fs.rmSync(lock, { force: true });
      }
    }
    let holder = NaN;
    let age = 0;
    try {
      holder = Number(fs.readFileSync(lock, 'utf8').trim());
      age = Date.now() - fs.statSync(lock).mtimeMs;
    } catch {
      continue; // released between our open and our read
    }
    if ((Number.isInteger(holder) && holder > 0 && !alive(holder)) || age > LOCK_STALE_MS) {
      log(`taking over ${lock} (its holder, pid ${holder}, is gone)`);
      fs.rmSync(lock, { force: true });
      continue;
    }
    if (Date.now() - lastSaid >= 15_000) {
      lastSaid = Date.now();
      log(
        `another process (pid ${holder}) is building weed into ${dir}; waiting for it ` +
          `(${Math.round((Date.now() - waitingSince) / 1000)}s)`,
      );
    }
    await new Promise((r) => setTimeout(r, 1_000));
    const done = ready();
    if (done !== undefined) return done;
  }
}

/**
 * The weed binary: SEAWEEDFS_WEED, else the cache, else a build from the Go module proxy into the
 * cache (one build per machine at a time), with progress through `log` and the build's own output
 * on stderr.
 */
export async function findWeed(log: Log = (l) => console.error(`[seaweedfs] ${l}`)): Promise<string> {
  const attempts: string[] = [];
  const fromEnv = process.env.SEAWEEDFS_WEED;
  if (fromEnv) {
    if (isExecutable(fromEnv) && answersVersion(fromEnv)) return fromEnv;
    attempts.push(`SEAWEEDFS_WEED=${fromEnv}: not an executable weed`);
  }
  const dir = weedCacheDir();
  const cached = path.join(dir, 'weed');
  const inCache = () => (isExecutable(cached) && answersVersion(cached) ? cached : undefined);
  if (inCache()) {
    log(`using ${cached} [route: cache]`);
    return cached;
  }
  attempts.push(`cache ${cached}: empty`);
  fs.mkdirSync(dir, { recursive: true });
  const partial = `${cached}.partial-${process.pid}`;
  let built = false;
  try {
    const weed = await withBuildLock(dir, log, inCache, async () => {
      built = true;
      await build(partial, log);
      if (!answersVersion(partial)) throw new Error('the built binary does not answer `weed version`');
      fs.renameSync(partial, cached);
      return cached;
    });
    log(`using ${weed} [route: ${built ? 'go build' : 'cache, built by another process'}]`);
    return weed;
  } catch (err) {
    fs.rmSync(partial, { force: true });
    attempts.push(`go build: ${(err as Error).message}`);
  }
  throw new WeedUnavailable(attempts);
}

export interface Seaweed {
  /** The S3 endpoint, `http://127.0.0.1:<port>`. */
  endpoint: string;
  /** Credentials the S3 gateway accepts (it runs without identities, so any are accepted). */
  credentials: { accessKeyId: string; secretAccessKey: string };
  stop(): Promise<void>;
}

/** Waits until the S3 gateway answers HTTP (any status) or the deadline passes. */
async function waitForS3(endpoint: string, child: ChildProcess, output: () => string, deadlineMs: number) {
  const until = Date.now() + deadlineMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`weed exited with ${child.exitCode} before S3 answered:\n${output()}`);
    try {
      const res = await fetch(endpoint, { signal: AbortSignal.timeout(2_000) });
      await res.arrayBuffer();
      // The gateway answers before the filer behind it is ready; a 5xx means not yet.
      if (res.status < 500) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > until)
      throw new Error(`SeaweedFS S3 at ${endpoint} did not answer within ${deadlineMs} ms:\n${output()}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * Starts `weed server` with master, volume, filer and S3 on free loopback ports and a temporary
 * directory; `stop()` kills it and removes the directory.
 */
export async function startSeaweed(opts: { weed?: string; deadlineMs?: number } = {}): Promise<Seaweed> {
  const weed = opts.weed ?? cachedWeed();
  if (!weed) throw new WeedUnavailable([`cache ${path.join(weedCacheDir(), 'weed')}: empty`]);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolplane-seaweed-'));
  const flags = [
    'master.port',
    'master.port.grpc',
    'volume.port',
    'volume.port.grpc',
    'filer.port',
    'filer.port.grpc',
    's3.port',
    's3.port.grpc',
    's3.port.iceberg',
    's3.port.lance',
    'iam.port',
    'metricsPort',
  ];
  const ports: Record<string, number> = {};
  // Distinct: freePort never hands the same port out twice (weed exited 255 when two listeners shared one).
  for (const flag of flags) ports[flag] = await freePort();
  const args = [
    'server',
    `-dir=${dir}`,
    '-ip=127.0.0.1',
    '-ip.bind=127.0.0.1',
    '-s3',
    '-volume.max=0',
    '-master.volumeSizeLimitMB=64',
    '-master.telemetry=false',
    ...flags.map((f) => `-${f}=${ports[f]}`),
  ];
  let out = '';
  const child = spawn(weed, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: false });
  const keep = (b: Buffer) => {
    out = (out + b.toString()).slice(-8_000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const endpoint = `http://127.0.0.1:${ports['s3.port']}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitForS3(endpoint, child, () => out, opts.deadlineMs ?? 90_000);
  } catch (err) {
    await stop();
    throw err;
  }
  return { endpoint, credentials: { accessKeyId: 'toolplane', secretAccessKey: 'toolplane' }, stop };
}

if (require.main === module) {
  findWeed().then(
    (weed) => console.log(weed),
    (err) => {
      console.error(String(err.message ?? err));
      process.exit(1);
    },
  );
}
