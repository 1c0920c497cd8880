// A BlobStore in an S3 bucket (AWS S3, SeaweedFS, MinIO, ...): the store worker replicas share.
import { createHash } from 'node:crypto';
import {
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  DeleteObjectCommand,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { ToolplaneError } from '../catalog/errors';
import { BlobNotFound, blobRef, hexOf, namedByContent, verified, type BlobStore } from './blob-store';
import { ErrorCode } from '../catalog/error-codes';

export interface S3BlobStoreOptions {
  /** Default: `TOOLPLANE_S3_BUCKET`. */
  bucket?: string;
  /** Prepended to every key, e.g. `toolplane/` (default: `TOOLPLANE_S3_PREFIX`, or none). */
  prefix?: string;
  /** For S3-compatible servers (default: `TOOLPLANE_S3_ENDPOINT`, or AWS). */
  endpoint?: string;
  /** Default: `AWS_REGION`, or `us-east-1`. */
  region?: string;
  /** Bucket in the path, not the host name; the default when an endpoint is given. */
  forcePathStyle?: boolean;
  /** Default: the AWS SDK's chain (`AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`, profiles, instance roles). */
  credentials?: S3ClientConfig['credentials'];
  /** A client configured elsewhere; the options above that configure a client are then ignored. */
  client?: S3Client;
}

/** The bucket cannot be reached or written: found when the worker starts, not after a tool's effect landed. */
export class S3BlobStoreUnavailable extends ToolplaneError<
  typeof ErrorCode.S3BlobStoreUnavailable,
  { bucket: string; endpoint: string }
> {
  constructor(bucket: string, endpoint: string, cause: string) {
    super(
      ErrorCode.S3BlobStoreUnavailable,
      `the S3 blob store (bucket ${bucket} at ${endpoint}) cannot be written by this worker: ${cause}. ` +
        'Outputs above the large-output threshold go there after their tool ran; check the bucket exists, the ' +
        'endpoint answers, and the credentials may put, get and delete objects in it.',
      { bucket, endpoint },
    );
  }
}

/** The options lack something no default provides. */
export class S3BlobStoreMisconfigured extends ToolplaneError<
  typeof ErrorCode.S3BlobStoreMisconfigured,
  { missing: string }
> {
  constructor(missing: string, hint: string) {
    super(ErrorCode.S3BlobStoreMisconfigured, `the S3 blob store has no ${missing}: ${hint}`, { missing });
  }
}

function describe(err: unknown): string {
  const e = err as { name?: string; message?: string; $metadata?: { httpStatusCode?: number } };
  const status = e.$metadata?.httpStatusCode;
  const text = [e.name, e.message].filter((s) => s && s !== 'UnknownError').join(': ') || String(err);
  return status ? `${text} (HTTP ${status})` : text;
}

function isNotFound(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e.name === 'NoSuchKey' || e.name === 'NotFound' || e.$metadata?.httpStatusCode === 404;
}

export class S3BlobStore implements BlobStore {
  readonly bucket: string;
  readonly prefix: string;
  /** Where the bucket is, for messages: the endpoint, or `AWS S3 (<region>)`. */
  readonly location: string;
  private readonly client: S3Client;

  constructor(opts: S3BlobStoreOptions = {}) {
    const bucket = opts.bucket ?? process.env.TOOLPLANE_S3_BUCKET;
    if (!bucket) throw new S3BlobStoreMisconfigured('bucket', 'pass { bucket } or set TOOLPLANE_S3_BUCKET');
    this.bucket = bucket;
    this.prefix = opts.prefix ?? process.env.TOOLPLANE_S3_PREFIX ?? '';
    const endpoint = opts.endpoint ?? process.env.TOOLPLANE_S3_ENDPOINT;
    const region = opts.region ?? process.env.AWS_REGION ?? 'us-east-1';
    this.location = endpoint ?? `AWS S3 (${region})`;
    this.client =
      opts.client ??
      new S3Client({
        region,
        ...(endpoint ? { endpoint } : {}),
        forcePathStyle: opts.forcePathStyle ?? endpoint !== undefined,
        ...(opts.credentials ? { credentials: opts.credentials } : {}),
      });
    namedByContent(this);
  }

  private key(ref: string, scope: string): string {
    const hex = hexOf(ref);
    const run = createHash('sha256').update(scope).digest('hex').slice(0, 32);
    return `${this.prefix}${run}/${hex}`;
  }

  async put(bytes: Buffer, scope: string): Promise<string> {
    const ref = blobRef(bytes);
    // Same bytes, same key: a repeated put rewrites identical content, so no existence check is needed.
    await this.client.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: this.key(ref, scope),
        Body: bytes,
        ContentType: 'application/octet-stream',
      }),
    );
    return ref;
  }

  async get(ref: string, scope: string): Promise<Buffer> {
    let bytes: Buffer;
    try {
      const out = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.key(ref, scope) }));
      if (!out.Body) throw new BlobNotFound(ref);
      bytes = Buffer.from(await out.Body.transformToByteArray());
    } catch (err) {
      if (isNotFound(err)) throw new BlobNotFound(ref);
      throw err;
    }
    return verified(ref, bytes);
  }

  /** Puts, reads back and deletes a probe object: the worker refuses to start on any failure. */
  async check(): Promise<void> {
    const Key = `${this.prefix}.probe-${process.pid}-${Date.now()}`;
    try {
      await this.client.send(
        new PutObjectCommand({ Bucket: this.bucket, Key, Body: Buffer.alloc(0), ContentLength: 0 }),
      );
      await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key }));
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key }));
    } catch (err) {
      throw new S3BlobStoreUnavailable(this.bucket, this.location, describe(err));
    }
  }

  /** Closes the client's connections. */
  destroy(): void {
    this.client.destroy();
  }
}
