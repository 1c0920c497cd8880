/**
 * PostgreSQL from Debian's packages, as the cluster's own database cluster in a data folder of the
 * project's, listening on 127.0.0.1 on a free port. Installed with apt-get when missing. Run as
 * the `postgres` user when this process is root (PostgreSQL refuses root).
 */
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { isExecutable } from '../temporal-cli';
import { ClusterFailed } from './errors';
import { ManagedProcess } from './process';

type Log = (line: string) => void;

export const PG_USER = 'temporal';
export const PG_PASSWORD = 'temporal';

/** The newest /usr/lib/postgresql/<major>/bin, or TOOLPLANE_PG_BIN. */
function findPgBin(): string | undefined {
  const configured = process.env.TOOLPLANE_PG_BIN;
  if (configured) return configured;
  const base = '/usr/lib/postgresql';
  if (!fs.existsSync(base)) return undefined;
  const majors = fs
    .readdirSync(base)
    .filter((d) => /^\d+$/.test(d) && isExecutable(path.join(base, d, 'bin', 'postgres')))
    .sort((a, b) => Number(b) - Number(a));
  return majors[0] ? path.join(base, majors[0], 'bin') : undefined;
}

export function ensurePostgres(log: Log): string {
  const found = findPgBin();
  if (found) return found;
  if (process.getuid?.() !== 0)
    throw new ClusterFailed(
      'postgres',
      'PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/postgres). Install it with `sudo apt-get install -y postgresql`, or set TOOLPLANE_PG_BIN to its bin directory',
    );
  log('PostgreSQL is missing: installing Debian’s postgresql package with apt-get');
  for (const args of [['update'], ['install', '-y', '--no-install-recommends', 'postgresql']]) {
    const r = spawnSync('apt-get', args, {
      stdio: 'inherit',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    if (r.status !== 0) throw new ClusterFailed('postgres', `apt-get ${args.join(' ')} exited with ${r.status}`);
  }
  const installed = findPgBin();
  if (!installed) throw new ClusterFailed('postgres', 'apt-get installed postgresql but no server binary was found');
  return installed;
}

/** uid/gid to run PostgreSQL as: ourselves, or `postgres` when we are root. */
function runAs(): { uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return {};
  const uid = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
  if (uid.status !== 0 || gid.status !== 0)
    throw new ClusterFailed('postgres', 'running as root, and there is no `postgres` user to run PostgreSQL as');
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/** The first folder on the way to `dir` that another user (PostgreSQL's) may not pass through, if any. */
export function closedAncestor(dir: string): string | undefined {
  let at = path.resolve(dir);
  const chain: string[] = [];
  for (;;) {
    chain.unshift(at);
    const up = path.dirname(at);
    if (up === at) break;
    at = up;
  }
  for (const d of chain) {
    if (!fs.existsSync(d)) return undefined; // made below with mode 0755
    if ((fs.statSync(d).mode & 0o001) === 0) return d;
  }
  return undefined;
}

/**
 * Where PostgreSQL keeps the data of the cluster whose data folder is `dataDir`: `<dataDir>/pg`, unless
 * it runs as the `postgres` user (we are root) and cannot reach that folder (a clone under /root or a
 * `mktemp -d`, mode 0700). Then in a folder of its own under `base` (default /var/lib/postgresql,
 * PostgreSQL's home), named by a digest of the data folder so the next start finds it again.
 */
export function postgresDataDir(dataDir: string, log: Log, opts: { asRoot?: boolean; base?: string } = {}): string {
  const inside = path.join(path.resolve(dataDir), 'pg');
  if (!(opts.asRoot ?? process.getuid?.() === 0)) return inside;
  // PostgreSQL makes its own folder 0700 (and owns it): only the folders above it matter.
  const closed = closedAncestor(path.dirname(inside));
  if (!closed) {
    fs.rmSync(path.join(path.resolve(dataDir), 'pg-location'), { force: true });
    return inside;
  }
  const base = opts.base ?? (fs.existsSync('/var/lib/postgresql') ? '/var/lib/postgresql' : '/var/tmp');
  const digest = crypto.createHash('sha256').update(path.resolve(dataDir)).digest('hex').slice(0, 16);
  const outside = path.join(base, 'toolplane', digest, 'pg');
  fs.mkdirSync(path.dirname(outside), { recursive: true, mode: 0o755 });
  for (const d of [path.join(base, 'toolplane'), path.dirname(outside)]) fs.chmodSync(d, 0o755);
  fs.writeFileSync(path.join(path.resolve(dataDir), 'pg-location'), `${outside}\n`);
  log(
    `${closed} is closed to other users (mode ${(fs.statSync(closed).mode & 0o777).toString(8)}), and PostgreSQL runs as the postgres user: its data goes to ${outside} instead (named in ${path.join(dataDir, 'pg-location')})`,
  );
  return outside;
}

export interface PostgresOptions {
  bin: string;
  /** The database cluster's folder (PGDATA). */
  dataDir: string;
  port: number;
  logFile: string;
}

export class Postgres {
  readonly process: ManagedProcess;
  private readonly user: { uid?: number; gid?: number };

  constructor(readonly opts: PostgresOptions) {
    this.user = runAs();
    this.process = new ManagedProcess({
      name: 'postgres',
      command: path.join(opts.bin, 'postgres'),
      args: [
        '-D',
        opts.dataDir,
        '-p',
        String(opts.port),
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        'unix_socket_directories=',
        '-c',
        'max_connections=300',
      ],
      logFile: opts.logFile,
      ...this.user,
    });
  }

  get initialized(): boolean {
    return fs.existsSync(path.join(this.opts.dataDir, 'PG_VERSION'));
  }

  /** A new, empty database cluster owned by the `temporal` superuser (password auth on TCP). */
  init(): void {
    const { dataDir } = this.opts;
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const pwFile = path.join(dataDir, '..', 'pg-password');
    fs.writeFileSync(pwFile, PG_PASSWORD, { mode: 0o600 });
    if (this.user.uid !== undefined) {
      fs.chownSync(dataDir, this.user.uid, this.user.gid!);
      fs.chownSync(pwFile, this.user.uid, this.user.gid!);
    }
    const r = spawnSync(
      path.join(this.opts.bin, 'initdb'),
      ['-D', dataDir, '-U', PG_USER, `--pwfile=${pwFile}`, '-A', 'scram-sha-256', '-E', 'UTF8', '--locale=C'],
      { encoding: 'utf8', ...this.user },
    );
    fs.rmSync(pwFile, { force: true });
    if (r.status !== 0) throw new ClusterFailed('postgres', `initdb failed:\n${r.stderr || r.stdout}`);
  }

  /** Starts the postmaster and waits until it accepts connections. */
  async start(timeoutMs = 60_000): Promise<void> {
    // A SIGKILLed postmaster leaves its pid file; PostgreSQL removes it when that pid is gone.
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      this.process.start();
      const ready = await this.waitReady(deadline);
      if (ready) return;
      if (Date.now() > deadline)
        throw new ClusterFailed(
          'postgres',
          `PostgreSQL did not accept connections on port ${this.opts.port}:\n${this.process.tail()}`,
          this.opts.logFile,
        );
      // It exited (e.g. the previous run's shared memory not yet released): try again.
      await new Promise((r) => setTimeout(r, 500));
    }
  }

  /** Runs one SQL statement through psql on TCP. */
  sql(db: string, statement: string): void {
    const r = spawnSync(
      path.join(this.opts.bin, 'psql'),
      [
        '-h',
        '127.0.0.1',
        '-p',
        String(this.opts.port),
        '-U',
        PG_USER,
        '-d',
        db,
        '-v',
        'ON_ERROR_STOP=1',
        '-qc',
        statement,
      ],
      { encoding: 'utf8', env: { ...process.env, PGPASSWORD: PG_PASSWORD } },
    );
    if (r.status !== 0) throw new ClusterFailed('postgres', `psql -d ${db} -c "${statement}" failed: ${r.stderr}`);
  }

  private async waitReady(deadline: number): Promise<boolean> {
    while (Date.now() < deadline) {
      if (!this.process.running) return false;
      const r = spawnSync(
        path.join(this.opts.bin, 'pg_isready'),
        ['-h', '127.0.0.1', '-p', String(this.opts.port), '-U', PG_USER, '-t', '2'],
        { encoding: 'utf8' },
      );
      if (r.status === 0) return true;
      await new Promise((r) => setTimeout(r, 250));
    }
    return false;
  }
}
