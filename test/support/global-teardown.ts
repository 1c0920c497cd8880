import fs from 'node:fs';
import type { TemporalServer } from '../../scripts/dev-server';

export default async function globalTeardown(): Promise<void> {
  await (globalThis as { __toolplaneServer?: TemporalServer }).__toolplaneServer?.stop();
  if (process.env.TOOLPLANE_TEST_DIR && !process.env.TOOLPLANE_KEEP_TEST_DIR)
    fs.rmSync(process.env.TOOLPLANE_TEST_DIR, { recursive: true, force: true });
}
