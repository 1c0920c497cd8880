/**
 * A provider's durable store: one JSON line per record, fsynced, under a lock file (./file-lock.ts) so
 * worker replicas on any host sharing the directory can use it. A record is written once per idempotency key.
 */
import fs from 'node:fs';
import path from 'node:path';
import { FileLock } from './file-lock';

export interface Keyed {
  idempotencyKey: string;
}

export class KeyedLog<T extends Keyed> {
  private readonly file: string;
  private readonly lock: FileLock;
  private readonly repeatsFile: string;

  constructor(
    readonly dir: string,
    readonly name: string,
  ) {
    fs.mkdirSync(dir, { recursive: true });
    this.file = path.join(dir, `${name}.jsonl`);
    this.lock = new FileLock(path.join(dir, `${name}.lock`));
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
    return this.lock.hold(() => {
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
}

export function defaultStoreDir(): string {
  return process.env.TOOLPLANE_STORE_DIR ?? path.resolve(__dirname, '..', '..', '.data', 'stores');
}
