// A bench process's own Temporal dev server, in a temporary directory that also holds the blob store
// its worker keeps transcripts and stored outputs in; `close` stops the server and removes both.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { EAGER_ACTIVITIES, freePort, startDevServer } from '../scripts/dev-server';

export interface BenchServer {
  address: string;
  /** The temporary directory: free for the bench's own files too, removed on `close`. */
  dir: string;
  close(): Promise<void>;
}

/** Installs the SDK's runtime (warnings only) and starts a dev server, with eager activities unless `eager` is false. */
export async function benchServer(name: string, eager = true): Promise<BenchServer> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `toolplane-${name}-`));
  process.env.TOOLPLANE_BLOB_DIR = path.join(dir, 'blobs');
  const server = await startDevServer({
    port: await freePort(),
    uiPort: await freePort(),
    dbFile: path.join(dir, 'temporal.sqlite'),
    log: () => {},
    dynamicConfig: eager ? EAGER_ACTIVITIES : {},
  });
  return {
    address: server.address,
    dir,
    close: async () => {
      await server.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
