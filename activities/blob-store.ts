// Content-addressed storage for outputs too large for history; history keeps a reference.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export interface BlobStore {
  /** Stores the bytes; returns `sha256:<hex>`. Storing the same bytes twice is one blob. */
  put(bytes: Buffer): Promise<string>;
  get(ref: string): Promise<Buffer>;
}

/** What history holds in place of a large output. Its labels stay with the call that produced it. */
export interface BlobRef {
  $blob: string;
  bytes: number;
  mediaType: 'application/json';
  /** The first characters, so a reader of the history sees what it is. */
  preview: string;
}

export const DEFAULT_LARGE_OUTPUT_BYTES = 256 * 1024;

export function isBlobRef(v: unknown): v is BlobRef {
  return typeof v === 'object' && v !== null && typeof (v as BlobRef).$blob === 'string' && /^sha256:[0-9a-f]{64}$/.test((v as BlobRef).$blob);
}

export class FileBlobStore implements BlobStore {
  constructor(readonly dir: string = process.env.TOOLPLANE_BLOB_DIR ?? path.resolve(__dirname, '..', '.data', 'blobs')) {}

  private file(ref: string): string {
    const hex = ref.replace(/^sha256:/, '');
    if (!/^[0-9a-f]{64}$/.test(hex)) throw new Error(`not a blob reference: ${ref}`);
    return path.join(this.dir, hex.slice(0, 2), hex);
  }

  async put(bytes: Buffer): Promise<string> {
    const ref = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
    const file = this.file(ref);
    if (!fs.existsSync(file)) {
      fs.mkdirSync(path.dirname(file), { recursive: true });
      const tmp = `${file}.${process.pid}.tmp`;
      fs.writeFileSync(tmp, bytes);
      fs.renameSync(tmp, file);
    }
    return ref;
  }

  async get(ref: string): Promise<Buffer> {
    const bytes = fs.readFileSync(this.file(ref));
    const actual = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
    if (actual !== ref) throw new Error(`blob ${ref} is corrupt (content hashes to ${actual})`);
    return bytes;
  }
}

/** Moves an output above the threshold into the store. */
export async function offload(output: unknown, store: BlobStore, threshold: number): Promise<unknown> {
  const text = JSON.stringify(output);
  const bytes = Buffer.byteLength(text);
  if (bytes <= threshold) return output;
  const ref: BlobRef = { $blob: await store.put(Buffer.from(text)), bytes, mediaType: 'application/json', preview: text.slice(0, 200) };
  return ref;
}

/** Brings a stored output back, for the model. */
export async function expand(value: unknown, store: BlobStore): Promise<unknown> {
  return isBlobRef(value) ? JSON.parse((await store.get(value.$blob)).toString('utf8')) : value;
}
