/**
 * A lock file for a store that worker replicas share, possibly from other hosts or containers mounting one
 * volume (docker-compose mounts one /data into every worker replica). The file names its holder: host name,
 * pid and a random token.
 *
 * - Taken with an exclusive create, so one holder at a time.
 * - A holder on this host whose pid is gone died holding it: its lock is broken at once.
 * - Any other holder (another host, whose pid means nothing here, or a live pid here) is waited for; its lock is
 *   broken only once its lease has run out: the file is older than `leaseMs`, far above the critical section
 *   (synchronous: a read and one fsynced append). Hosts' clocks must agree to well within the lease.
 * - Breaking and releasing move the file aside first (rename is atomic) and delete it only if it is still the
 *   lock they meant; otherwise they put it back. A breaker never deletes a lock taken after the one it judged
 *   stale, and a holder never deletes its successor's. (The one gap left: a lock put back while a third writer
 *   took the free path in that instant, which needs two breakers of one stale lock and a writer within
 *   microseconds.)
 * Each replica needs its own host name (containers get their own by default: do not set one `hostname:` for
 * replicas).
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';

export const LOCK_LEASE_MS = 30_000;

interface Holder {
  host: string;
  pid: number;
  token: string;
}

export class FileLock {
  constructor(
    readonly file: string,
    readonly leaseMs = LOCK_LEASE_MS,
  ) {}

  /** Runs `fn` (synchronous, short) holding the lock. */
  async hold<R>(fn: () => R): Promise<R> {
    const me = JSON.stringify({ host: os.hostname(), pid: process.pid, token: randomUUID() } satisfies Holder);
    for (let i = 0; !this.take(me); i++) {
      this.breakIfStale();
      await new Promise((r) => setTimeout(r, 5 + Math.min(i, 20)));
    }
    try {
      return fn();
    } finally {
      this.removeIf(me);
    }
  }

  private take(me: string): boolean {
    try {
      fs.writeFileSync(this.file, me, { flag: 'wx' });
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw err;
    }
  }

  private breakIfStale(): void {
    let seen: string;
    let ageMs: number;
    try {
      seen = fs.readFileSync(this.file, 'utf8');
      ageMs = Date.now() - fs.statSync(this.file).mtimeMs;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    const holder = parseHolder(seen);
    const deadHere = holder?.host === os.hostname() && !alive(holder.pid);
    if (deadHere || ageMs > this.leaseMs) this.removeIf(seen);
  }

  /** Deletes the lock file if it still holds `expected`; leaves any other holder's in place. */
  private removeIf(expected: string): void {
    const aside = `${this.file}.${randomUUID()}`;
    try {
      fs.renameSync(this.file, aside);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    try {
      if (fs.readFileSync(aside, 'utf8') !== expected) fs.linkSync(aside, this.file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    } finally {
      fs.rmSync(aside, { force: true });
    }
  }
}

function parseHolder(text: string): Holder | undefined {
  try {
    const h = JSON.parse(text) as Partial<Holder> | null;
    return typeof h?.host === 'string' && typeof h.pid === 'number' ? (h as Holder) : undefined;
  } catch {
    return undefined; // being written, or not ours: only the lease applies
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH'; // EPERM: alive, another user's
  }
}
