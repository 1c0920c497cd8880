// A tool's deadline counts from the attempt's start on the worker, not from when the attempt was scheduled:
// a call that waited in the task queue (its worker died, a backlog, a server restart) gets its whole start-to-close.
import { randomUUID } from 'node:crypto';
import { temporal } from '@temporalio/proto';
import type { Manifest } from '../../catalog/manifest';
import type { ToolRunResult } from '../../workflows/tool-run';
import { exampleManifest, harness, testAddress, testDir, type Harness } from '../support/env';
import { waitFor } from '../support/wait';
import { createTools } from '../../examples/support-desk/tools';
import { spawnWorker, writeManifest, type WorkerProcess } from '../../scripts/worker-process';

const START_TO_CLOSE_MS = 2_000;

describe('a call that waited in the queue longer than its start-to-close', () => {
  let h: Harness;
  const workers: WorkerProcess[] = [];
  const closing: Harness[] = [];
  beforeAll(async () => {
    h = await harness('unused');
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop()));
    await Promise.all(closing.splice(0).map((c) => c.close()));
  });
  afterAll(() => h.close());

  it('is performed once a worker takes it: its deadline starts when the attempt starts here', async () => {
    const base = exampleManifest();
    // One attempt only: the resend that waited in the queue follows a lost send, which is no attempt.
    const manifest: Manifest = {
      ...base,
      tools: base.tools.map((t) => ({
        ...t,
        timeouts: { ...t.timeouts, start_to_close: `${START_TO_CLOSE_MS}ms` },
        retry: { ...t.retry, initial_interval: '100ms', maximum_attempts: 1 },
      })),
    };
    const dir = testDir('deadline');
    const manifestFile = writeManifest(dir, manifest);
    const taskQueue = `deadline-${randomUUID()}`;
    const workflowId = `deadline-${randomUUID()}`;
    const handle = await h.client.workflow.start('toolRun', {
      taskQueue,
      workflowId,
      args: [
        {
          grants: manifest.tools.map((t) => t.id),
          principal: 'agent:test',
          calls: [{ toolId: 'tool://crm/lookup_customer', args: { email: 'bob@example.com' } }],
        },
      ],
    });
    const spawn = (killAt?: string) => {
      const w = spawnWorker({
        address: testAddress(),
        workflowBundle: process.env.TOOLPLANE_TEST_BUNDLE,
        manifestFile,
        taskQueue,
        storeDir: dir,
        killAt,
      });
      workers.push(w);
      return w;
    };
    // The only worker dies inside the call. A worker that serves workflow tasks alone sends the call
    // again; nobody polls for activities, so the resend waits in the queue.
    expect((await spawn('after_commit').exited).signal).toBe('SIGKILL');
    const workflowsOnly = await harness(taskQueue);
    closing.push(workflowsOnly);
    await workflowsOnly.runWorker({
      manifest,
      tools: createTools(),
      workerOptions: { enableNonLocalActivities: false },
    });
    await waitFor('the resend to wait in the queue for longer than its start-to-close', 60_000, async () => {
      const pending = (await handle.describe()).raw.pendingActivities?.[0];
      if (
        !pending?.activityId?.endsWith('.1') ||
        pending.state !== temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_SCHEDULED
      )
        return false;
      const scheduledMs =
        Number(pending.scheduledTime!.seconds) * 1000 + Math.floor((pending.scheduledTime!.nanos ?? 0) / 1e6);
      return Date.now() > scheduledMs + START_TO_CLOSE_MS + 500;
    });

    spawn();
    const result: ToolRunResult = await handle.result();
    expect(result.outputs[0]).toMatchObject({ account_id: 'acct_bob_002' });
    expect(result.status).toBe('completed');
    expect(result.journal[0]).toMatchObject({ attempts: 2, lostSends: 1 });
  });
});
