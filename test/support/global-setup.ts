// One real dev server for the whole suite (free ports, temporary SQLite file) and one workflow bundle.
// On a fresh machine the Temporal CLI is obtained here (scripts/temporal-cli.ts, cached outside the clone),
// and what that does is printed; SeaweedFS's weed is obtained by the S3 suite, the only one that needs it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, startDevServer, type TemporalServer } from '../../scripts/dev-server';
import { writeWorkflowBundle } from '../../scripts/workflow-bundle';

export default async function globalSetup(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolplane-test-'));
  const port = await freePort();
  const uiPort = await freePort();
  const server: TemporalServer = await startDevServer({
    port,
    uiPort,
    dbFile: path.join(dir, 'temporal.sqlite'),
    log: (line) => process.stderr.write(`[test setup] ${line}\n`),
  });
  (globalThis as { __toolplaneServer?: TemporalServer }).__toolplaneServer = server;
  const bundlePath = path.join(dir, 'workflow-bundle.js');
  await writeWorkflowBundle(bundlePath, undefined, { sources: false });
  process.env.TOOLPLANE_TEST_ADDRESS = server.address;
  if (server.uiUrl) process.env.TOOLPLANE_TEST_UI_URL = server.uiUrl;
  process.env.TOOLPLANE_TEST_DIR = dir;
  process.env.TOOLPLANE_TEST_BUNDLE = bundlePath;
}
