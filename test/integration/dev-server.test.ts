// `npm start` reopens the dev server's database in .data: one written by an older toolplane lacks the
// search attributes added since, and the CLI's --search-attribute flags register them only in a new one.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { SEARCH_ATTRIBUTES } from '../../common/search-attributes';
import { freePort, startDevServer } from '../../scripts/dev-server';
import { findTemporalCli } from '../../scripts/temporal-cli';
import { probe } from '../../inspect/connection';
import { testDir } from '../support/env';
import { waitFor } from '../support/wait';

describe('the dev server on a database from an older toolplane', () => {
  it('registers the search attributes the database lacks before it reports ready', async () => {
    const dbFile = path.join(testDir('dev-server-reopened'), 'temporal.sqlite');
    // The database as a server without toolplane's attributes leaves it.
    const cli = await findTemporalCli(() => {});
    const port = await freePort();
    const bare = spawn(
      cli.path,
      ['server', 'start-dev', '--db-filename', dbFile, '--port', String(port), '--headless', '--log-level', 'error'],
      { stdio: 'ignore' },
    );
    const exited = new Promise((r) => bare.once('exit', r));
    // Stopped only once it has written its namespace: a server killed while it sets up leaves a database no server opens.
    await waitFor('the bare dev server to serve its namespace', 60_000, async () => {
      await probe(`127.0.0.1:${port}`, 1000);
      const c = await Connection.connect({ address: `127.0.0.1:${port}` });
      try {
        await c.workflowService.describeNamespace({ namespace: 'default' });
        return true;
      } finally {
        await c.close();
      }
    });
    bare.kill('SIGTERM');
    await exited;

    const server = await startDevServer({ dbFile, port: await freePort(), uiPort: await freePort(), log: () => {} });
    try {
      const connection = await Connection.connect({ address: server.address });
      try {
        const listed = await connection.operatorService.listSearchAttributes({ namespace: server.namespace });
        expect(Object.keys(listed.customAttributes ?? {})).toEqual(
          expect.arrayContaining(SEARCH_ATTRIBUTES.map((a) => a.name)),
        );
      } finally {
        await connection.close();
      }
    } finally {
      await server.stop();
    }
  });
});
