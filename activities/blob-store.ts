// Content-addressed storage for outputs too large for history, scoped to the run that stored them.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ToolplaneError } from '../catalog/errors';
import type { StoredOutput } from '../common/stored-output';
import { dataDir, makePrivateDirAsync, PRIVATE_FILE_MODE } from './data-dir';
import { ErrorCode } from '../catalog/error-codes';

export interface BlobStore {
  /** Stores the bytes for one run; returns `sha256:<hex>`. Storing the same bytes twice is one blob. */
  put(bytes: Buffer, scope: string): Promise<string>;
  /** Reads a blob the run `scope` stored; a blob of another run is not found. */
  get(ref: string, scope: string): Promise<Buffer>;
  /** Called when a worker starts: throws if the store cannot be written, before any tool runs. */
  check?(): Promise<void>;
}

/** The store cannot be written: found when the worker starts, not after a tool's effect landed. */
export class BlobStoreUnwritable extends ToolplaneError<typeof ErrorCode.BlobStoreUnwritable, { location: string }> {
  constructor(location: string, cause: string) {
    super(
      ErrorCode.BlobStoreUnwritable,
      `the blob store at ${location} cannot be written by this worker (uid ${process.getuid?.() ?? '?'}): ${cause}. ` +
        'Outputs above the large-output threshold go there after their tool ran; set TOOLPLANE_BLOB_DIR (or ' +
        'TOOLPLANE_DATA_DIR) to a directory this user can write, shared by every worker replica, or pass a BlobStore.',
      { location },
    );
  }
}

export const DEFAULT_LARGE_OUTPUT_BYTES = 256 * 1024;

export class BlobNotFound extends ToolplaneError<typeof ErrorCode.BlobNotFound, { ref: string }> {
  constructor(ref: string) {
    super(ErrorCode.BlobNotFound, `blob ${ref} is not in this run's store`, { ref });
  }
}

/** A string that is no blob reference (`sha256:` and 64 hex digits). */
export class BlobRefInvalid extends ToolplaneError<typeof ErrorCode.BlobRefInvalid, { ref: string }> {
  constructor(ref: string) {
    super(ErrorCode.BlobRefInvalid, `not a blob reference: ${ref}`, { ref });
  }
}

/** A stored blob whose content no longer hashes to its reference. */
export class BlobCorrupt extends ToolplaneError<typeof ErrorCode.BlobCorrupt, { ref: string; actual: string }> {
  constructor(ref: string, actual: string) {
    super(ErrorCode.BlobCorrupt, `blob ${ref} is corrupt (content hashes to ${actual})`, { ref, actual });
  }
}

/** The reference toolplane's stores give `bytes`: their SHA-256, known before they are stored. */
export function blobRef(bytes: Buffer): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

/** toolplane's own stores, which give every blob its `blobRef`; a store a user writes may name blobs otherwise. */
const byContent = new WeakSet<BlobStore>();

/** Marks a store of toolplane's: `put` answers `blobRef(bytes)`. */
export function namedByContent(store: BlobStore): void {
  byContent.add(store);
}

/** Whether `store.put(bytes)` is known to answer `blobRef(bytes)`, so a blob can be named before it is stored. */
export function namesByContent(store: BlobStore): boolean {
  return byContent.has(store);
}

/** The hex digest a blob reference names; every store keys its blobs by it. */
export function hexOf(ref: string): string {
  const hex = ref.replace(/^sha256:/, '');
  if (!/^[0-9a-f]{64}$/.test(hex)) throw new BlobRefInvalid(ref);
  return hex;
}

/** The bytes read back under `ref`, checked against it. */
export function verified(ref: string, bytes: Buffer): Buffer {
  const actual = blobRef(bytes);
  if (actual !== ref) throw new BlobCorrupt(ref, actual);
  return bytes;
}

/** Directories a store remembers having made (a run's blobs share one). */
const MADE_DIRS = 1024;
/** Each write's temporary file is its own, even for two writes of the same bytes at once. */
let writes = 0;

/** Writes a blob's temporary file readable by its owner only, whatever the umask. */
async function writePrivate(file: string, bytes: Buffer): Promise<void> {
  await fs.promises.writeFile(file, bytes, { mode: PRIVATE_FILE_MODE });
  await fs.promises.chmod(file, PRIVATE_FILE_MODE);
}

export class FileBlobStore implements BlobStore {
  /** Run directories this store made or found: a run's later blobs skip the `mkdir`. */
  private readonly made = new Set<string>();

  constructor(readonly dir: string = process.env.TOOLPLANE_BLOB_DIR ?? path.join(dataDir(), 'blobs')) {
    namedByContent(this);
  }

  private file(ref: string, scope: string): string {
    const hex = hexOf(ref);
    const run = createHash('sha256').update(scope).digest('hex').slice(0, 32);
    return path.join(this.dir, run, hex);
  }

  async put(bytes: Buffer, scope: string): Promise<string> {
    const ref = blobRef(bytes);
    const file = this.file(ref, scope);
    if (fs.existsSync(file)) return ref;
    const dir = path.dirname(file);
    const tmp = `${file}.${process.pid}.${++writes}.tmp`;
    if (!this.made.has(dir)) await this.makeDir(dir);
    try {
      await writePrivate(tmp, bytes);
    } catch (err) {
      // The directory went away since (cleaned up by hand): make it again, once.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      this.made.delete(dir);
      await this.makeDir(dir);
      await writePrivate(tmp, bytes);
    }
    await fs.promises.rename(tmp, file);
    return ref;
  }

  private async makeDir(dir: string): Promise<void> {
    // The store's own folder and the run's, both the owner's only (a custom TOOLPLANE_BLOB_DIR too).
    if (path.dirname(this.dir) === dataDir()) await makePrivateDirAsync(dataDir());
    await makePrivateDirAsync(this.dir);
    await makePrivateDirAsync(dir);
    if (this.made.size >= MADE_DIRS) this.made.clear();
    this.made.add(dir);
  }

  async check(): Promise<void> {
    const probe = path.join(this.dir, `.probe-${process.pid}`);
    try {
      await makePrivateDirAsync(this.dir);
      await fs.promises.writeFile(probe, '', { mode: PRIVATE_FILE_MODE });
      await fs.promises.rm(probe);
    } catch (err) {
      throw new BlobStoreUnwritable(this.dir, (err as Error).message);
    }
  }

  async get(ref: string, scope: string): Promise<Buffer> {
    let bytes: Buffer;
    try {
      bytes = await fs.promises.readFile(this.file(ref, scope));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new BlobNotFound(ref);
      throw err;
    }
    return verified(ref, bytes);
  }
}

/** Moves an output above the threshold into the store; returns the envelope, or undefined when it fits history. */
export async function offload(
  output: unknown,
  store: BlobStore,
  threshold: number,
  scope: string,
): Promise<StoredOutput | undefined> {
  const text = JSON.stringify(output);
  const bytes = Buffer.byteLength(text);
  if (bytes <= threshold) return undefined;
  return {
    ref: await store.put(Buffer.from(text), scope),
    scope,
    bytes,
    mediaType: 'application/json',
    preview: text.slice(0, 200),
  };
}
