// Where a worker keeps its data: from options or the environment, never the package's own folder.
import path from 'node:path';

/** `TOOLPLANE_DATA_DIR`, or `.data` in the current working directory. */
export function dataDir(): string {
  return path.resolve(process.env.TOOLPLANE_DATA_DIR ?? path.join(process.cwd(), '.data'));
}
