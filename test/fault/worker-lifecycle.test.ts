// Real worker processes against an unreachable server and a tool that ignores cancellation.
import net from 'node:net';
import { randomUUID } from 'node:crypto';
import type { ToolRunResult } from '../../workflows/tool-run';
import { freePort } from '../../scripts/dev-server';
import { spawnWorker, writeManifest, type WorkerProcess } from '../../scripts/worker-process';
import { exampleManifest, harness, testAddress, testDir, type Harness } from '../support/env';
import { waitFor } from '../support/wait';

describe('a worker process', () => {
  let h: Harness;
  const workers: WorkerProcess[] = [];
  const servers: net.Server[] = [];
  beforeAll(async () => {
    h = await harness('unused');
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop()));
    for (const s of servers.splice(0)) s.close();
  });
  afterAll(() => h.close());

  const lookup = (taskQueue: string) =>
    h.client.workflow.start('toolRun', {
      taskQueue,
      workflowId: `lifecycle-${randomUUID()}`,
      args: [
        {
          principal: 'agent:test',
          calls: [{ toolId: 'tool://crm/lookup_customer', args: { email: 'bob@example.com' } }],
        },
      ],
    });

  function spawn(taskQueue: string, address: string, env: Record<string, string> = {}) {
    const dir = testDir('lifecycle');
    const w = spawnWorker({
      address,
      workflowBundle: process.env.TOOLPLANE_TEST_BUNDLE,
      manifestFile: writeManifest(dir, exampleManifest()),
      taskQueue,
      storeDir: dir,
      env,
    });
    workers.push(w);
    return w;
  }

  it('started while the server is unreachable, says so, retries, and serves once it is reachable', async () => {
    // A port nothing listens on yet; later it forwards to the suite's server.
    const port = await freePort();
    const taskQueue = `lifecycle-${randomUUID()}`;
    const w = spawn(taskQueue, `127.0.0.1:${port}`);
    await waitFor('the worker to say the server is unreachable, twice', 120_000, () => {
      const said = w.output().match(/\[worker\] Temporal at 127\.0\.0\.1:\d+ is unreachable \(.*\); retrying in/g);
      return (said?.length ?? 0) >= 2;
    });
    expect(w.child.exitCode).toBeNull();

    const [host, target] = testAddress().split(':') as [string, string];
    const proxy = net.createServer((socket) => {
      const upstream = net.connect(Number(target), host);
      socket.pipe(upstream).pipe(socket);
      socket.on('error', () => upstream.destroy());
      upstream.on('error', () => socket.destroy());
    });
    servers.push(proxy);
    await new Promise<void>((r) => proxy.listen(port, '127.0.0.1', () => r()));
    await waitFor('the worker to connect', 120_000, () => /\[worker\] connected to Temporal at/.test(w.output()));
    const result: ToolRunResult = await (await lookup(taskQueue)).result();
    expect(result.outputs[0]).toMatchObject({ account_id: 'acct_bob_002' });
  });

  it('on SIGTERM, stops within its forced shutdown time although a tool ignores cancellation', async () => {
    const taskQueue = `lifecycle-${randomUUID()}`;
    const w = spawn(taskQueue, testAddress(), {
      TOOLPLANE_HANG_AT: 'lookup',
      TOOLPLANE_SHUTDOWN_GRACE_TIME: '1s',
      TOOLPLANE_SHUTDOWN_FORCE_TIME: '3s',
    });
    const handle = await lookup(taskQueue);
    await waitFor('the tool to hang', 120_000, () => w.output().includes('[fault] hanging at lookup'));
    w.child.kill('SIGTERM');
    // Without a forced shutdown time the process would wait for the tool forever.
    const ended = await Promise.race([
      w.exited,
      new Promise<'still running'>((r) => setTimeout(() => r('still running'), 90_000).unref()),
    ]);
    expect(ended).not.toBe('still running');
    expect(w.output()).toMatch(/\[worker\] SIGTERM: shutting down/);
    // The run is not lost: the read is retried by the next worker.
    spawn(taskQueue, testAddress());
    const result: ToolRunResult = await handle.result();
    expect(result.outputs[0]).toMatchObject({ account_id: 'acct_bob_002' });
  });
});
