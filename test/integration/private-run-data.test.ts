// Run data (model conversations, tool results, every run's history) is readable by its owner only,
// whatever the umask: a shared host's other users read none of it.
import fs from 'node:fs';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { FileBlobStore } from '../../activities/blob-store';
import { freePort, startDevServer } from '../../scripts/dev-server';
import { testDir } from '../support/env';

const mode = (p: string): number => fs.statSync(p).mode & 0o777;

describe('run data on disk', () => {
  let umask: number;
  beforeEach(() => {
    umask = process.umask(0);
  });
  afterEach(() => {
    process.umask(umask);
  });

  it('keeps blob files 0600 and their folders 0700 under a permissive umask', async () => {
    const root = testDir('private-blobs');
    fs.chmodSync(root, 0o755);
    const store = new FileBlobStore(path.join(root, 'blobs'));
    await store.check();
    const ref = await store.put(Buffer.from('the customer said: my card number is ...'), 'run-1');
    const files = fs.readdirSync(store.dir, { recursive: true, withFileTypes: true });
    const blobs = files.filter((f) => f.isFile()).map((f) => path.join(f.parentPath, f.name));
    const dirs = files.filter((f) => f.isDirectory()).map((f) => path.join(f.parentPath, f.name));
    expect(blobs).toHaveLength(1);
    expect(blobs.map(mode)).toEqual([0o600]);
    expect([store.dir, ...dirs].map(mode)).toEqual([store.dir, ...dirs].map(() => 0o700));
    expect((await store.get(ref, 'run-1')).toString()).toContain('card number');
  });

  it('narrows a blob folder left world-readable by an older toolplane', async () => {
    const dir = path.join(testDir('private-blobs-old'), 'blobs');
    fs.mkdirSync(dir, { mode: 0o755 });
    await new FileBlobStore(dir).put(Buffer.from('x'), 'run-2');
    expect(mode(dir)).toBe(0o700);
  });

  it("keeps the dev server's database 0600 and its folder 0700", async () => {
    const dataDir = path.join(testDir('private-dev-db'), 'data');
    const dbFile = path.join(dataDir, 'temporal.sqlite');
    const server = await startDevServer({ dbFile, port: await freePort(), uiPort: await freePort(), log: () => {} });
    try {
      // The database is written once the server has a namespace.
      const connection = await Connection.connect({ address: server.address });
      try {
        await connection.workflowService.describeNamespace({ namespace: server.namespace });
      } finally {
        await connection.close();
      }
      expect(mode(dataDir)).toBe(0o700);
      const written = fs.readdirSync(dataDir).filter((f) => f.startsWith('temporal.sqlite'));
      expect(written).toContain('temporal.sqlite');
      expect(written.map((f) => mode(path.join(dataDir, f)))).toEqual(written.map(() => 0o600));
    } finally {
      await server.stop();
    }
  });
});
