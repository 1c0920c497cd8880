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
import { cacheRoot, isExecutable, onPath, runShown } from './temporal-cli';

export const SEAWEEDFS_MODULE = 'github.com/seaweedfs/seaweedfs@v0.0.0-20261109003541-7506e5f91cd6';

type Log = (line: string) => void;

export function weedCacheDir(): string {
  return path.join(cacheRoot(), 'seaweedfs');
}

/** The command that obtains `weed`, for messages. */
export const WEED_COMMAND = 'npx tsx scripts/seaweedfs.ts';

export class WeedUnavailable extends Error {
  readonly code = 'WeedUnavailable';
  constructor(readonly attempts: string[]) {
    super(
      [
        'Could not find or build SeaweedFS (weed). Tried:',
        ...attempts.map((a) => `  - ${a}`),
        `Run \`${WEED_COMMAND}\` (needs go and the Go module proxy), or point SEAWEEDFS_WEED at a weed binary.`,
      ].join('\n'),
    );
    this.name = 'WeedUnavailable';
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

export async function findWeed(log: Log = (l) => console.error(`[seaweedfs] ${l}`)): Promise<string> {
  const attempts: string[] = [];
  const fromEnv = process.env.SEAWEEDFS_WEED;
  if (fromEnv) {
    if (isExecutable(fromEnv) && answersVersion(fromEnv)) return fromEnv;
    attempts.push(`SEAWEEDFS_WEED=${fromEnv}: not an executable weed`);
  }
  const dir = weedCacheDir();
  const cached = path.join(dir, 'weed');
  if (isExecutable(cached) && answersVersion(cached)) {
    log(`using ${cached} [route: cache]`);
    return cached;
  }
  attempts.push(`cache ${cached}: empty`);
  fs.mkdirSync(dir, { recursive: true });
  const partial = `${cached}.partial-${process.pid}`;
  try {
    await build(partial, log);
    if (!answersVersion(partial)) throw new Error('the built binary does not answer `weed version`');
    fs.renameSync(partial, cached);
    log(`using ${cached} [route: go build]`);
    return cached;
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
