/**
 * A provider's durable store: one JSON line per record, fsynced, under a lock file so several
 * worker processes can share it. A record is written once per idempotency key.
 */
import fs from 'node:fs';
import path from 'node:path';

export interface Keyed {
  idempotencyKey: string;
}

export class KeyedLog<T extends Keyed> {
  private readonly file: string;
  private readonly lock: string;
  private readonly repeatsFile: string;

  constructor(
    readonly dir: string,
    readonly name: string,
  ) {
    fs.mkdirSync(dir, { recursive: true });
    this.file = path.join(dir, `${name}.jsonl`);
    this.lock = path.join(dir, `${name}.lock`);
    this.repeatsFile = path.join(dir, `${name}.repeats.jsonl`);
  }

  /** Calls that arrived again under a key already recorded. */
  repeats(): number {
    return fs.existsSync(this.repeatsFile)
      ? fs.readFileSync(this.repeatsFile, 'utf8').split('\n').filter(Boolean).length
      : 0;
  }

  all(): (T & { id: string; at: string })[] {
    if (!fs.existsSync(this.file)) return [];
    return fs
      .readFileSync(this.file, 'utf8')
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l));
  }

  byKey(idempotencyKey: string): (T & { id: string; at: string }) | undefined {
    return this.all().find((p) => p.idempotencyKey === idempotencyKey);
  }

  /** Records once per key; a repeat returns the first record. */
  async record(value: T): Promise<{ record: T & { id: string; at: string }; duplicate: boolean }> {
    return this.locked(() => {
      const records = this.all();
      const existing = records.find((r) => r.idempotencyKey === value.idempotencyKey);
      if (existing) {
        // A provider that honours keys absorbs a resend; the chaos campaign counts them.
        fs.appendFileSync(
          this.repeatsFile,
          JSON.stringify({ idempotencyKey: value.idempotencyKey, at: new Date().toISOString() }) + '\n',
        );
        return { record: existing, duplicate: true };
      }
      const record = { ...value, id: `${this.name}_${records.length + 1}`, at: new Date().toISOString() };
      const fd = fs.openSync(this.file, 'a');
      try {
        fs.writeSync(fd, JSON.stringify(record) + '\n');
        fs.fsyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
      return { record, duplicate: false };
    });
  }

  private async locked<R>(fn: () => R): Promise<R> {
    for (let i = 0; ; i++) {
      try {
        fs.writeFileSync(this.lock, String(process.pid), { flag: 'wx' });
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        this.breakStaleLock();
        await new Promise((r) => setTimeout(r, 5 + Math.min(i, 20)));
      }
    }
    try {
      return fn();
    } finally {
      fs.rmSync(this.lock, { force: true });
    }
  }

  /** A worker killed while holding the lock must not wedge the store. */
  private breakStaleLock(): void {
    try {
      const pid = Number(fs.readFileSync(this.lock, 'utf8'));
      if (pid && pid !== process.pid) process.kill(pid, 0);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ESRCH') fs.rmSync(this.lock, { force: true });
    }
  }
}

export function defaultStoreDir(): string {
  return process.env.TOOLPLANE_STORE_DIR ?? path.resolve(__dirname, '..', '..', '.data', 'stores');
}
