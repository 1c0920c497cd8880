// Where a worker keeps its data: from options or the environment, never the package's own folder.
import fs from 'node:fs';
import path from 'node:path';

/** `TOOLPLANE_DATA_DIR`, or `.data` in the current working directory. */
export function dataDir(): string {
  return path.resolve(process.env.TOOLPLANE_DATA_DIR ?? path.join(process.cwd(), '.data'));
}

/** Run data (conversations, tool results, the dev database) is its owner's only, whatever the umask. */
export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/**
 * Makes `dir` (and missing parents) and leaves it readable by its owner only: `mkdir`'s mode is
 * narrowed by the umask and ignored for a folder that exists, so the mode is set explicitly.
 */
export function makePrivateDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  fs.chmodSync(dir, PRIVATE_DIR_MODE);
}

export async function makePrivateDirAsync(dir: string): Promise<void> {
  await fs.promises.mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  await fs.promises.chmod(dir, PRIVATE_DIR_MODE);
}
