// Deferred extension tools: dormant until an authorised call holds the lease; real processes.
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createExtensionTools } from '../../activities/extensions/deferred-extension-tool';
import { ExtensionManager } from '../../activities/extensions/extension-manager';
import { createToolActivities } from '../../activities/tool-activities';
import { TicketIssuer } from '../../activities/identity/tickets';
import { ToolRegistry } from '../../activities/tool-registry';
import { EXTENSION_RUNTIME } from '../../catalog/capabilities';
import { loadManifest } from '../../runtime/manifest-file';
import type { Manifest } from '../../catalog/manifest';
import type { ToolRunResult } from '../../workflows/tool-run';
import { harness, testDir, type Harness } from '../support/env';
import { historyOf } from '../support/history';
import { waitFor } from '../support/wait';

const root = path.resolve(__dirname, '..', '..');
const base: Manifest = loadManifest(path.join(root, 'examples', 'mcp-ledger', 'manifest.yaml')).manifest;
/** The three extensions, writing a pid file when they start, with a short idle time for alpha. */
function withPidDir(pidDir: string): Manifest {
  const servers = Object.fromEntries(
    Object.entries(base.servers).map(([k, s]) => [
      k,
      s.kind === 'extension'
        ? { ...s, env: { ...s.env, LEDGER_PID_DIR: pidDir }, ...(k === 'alpha' ? { idle_timeout: '1500ms' } : {}) }
        : s,
    ]),
  );
  return { ...base, servers };
}
const started = (pidDir: string) => (fs.existsSync(pidDir) ? fs.readdirSync(pidDir).sort() : []);

describe('deferred extension tools', () => {
  let h: Harness;
  const pidDir = testDir('ext-pids');
  const manifest = withPidDir(pidDir);
  const logs: string[] = [];
  const extensions = new ExtensionManager(manifest, (l) => logs.push(l));

  beforeAll(async () => {
    process.env.TOOLPLANE_STORE_DIR = testDir('ext-store');
    h = await harness(`ext-${randomUUID()}`);
    await h.runWorker({ manifest, tools: [], extensions, log: () => {} });
  });
  afterAll(async () => {
    await extensions.stopAll();
    await h.close();
  });

  async function run(calls: { toolId: string; args: unknown }[], capabilities?: string[]) {
    const workflowId = `ext-${randomUUID()}`;
    const result: ToolRunResult = await h.client.workflow.execute('toolRun', {
      taskQueue: h.taskQueue,
      workflowId,
      args: [
        {
          manifest,
          grants: manifest.tools.map((t) => t.id),
          principal: 'agent:test',
          calls,
          capabilities,
          continueOnError: true,
        },
      ],
    });
    return { result, workflowId };
  }

  it('registers extension tools without starting anything', () => {
    expect(started(pidDir)).toEqual([]);
    expect(extensions.starts).toEqual([]);
  });

  it('without the lease capability, the call fails typed and no process is started', async () => {
    const { result, workflowId } = await run([
      { toolId: 'ext:alpha:add_entry', args: { account: 'a', amount_cents: 1 } },
    ]);
    expect(result.journal[0]).toMatchObject({ decision: 'refused', rule: 'lease', error: { code: 'LeaseMissing' } });
    expect(started(pidDir)).toEqual([]);
    const scheduled = (await historyOf(h.client, workflowId)).filter(
      (e) =>
        e.activityTaskScheduledEventAttributes &&
        e.activityTaskScheduledEventAttributes.activityType?.name !== 'authorizeRun',
    );
    expect(scheduled).toEqual([]);
  });

  it('an activity asked to run an extension tool without a lease fails typed and spawns nothing', async () => {
    const pids = testDir('ext-direct');
    const m = withPidDir(pids);
    const mgr = new ExtensionManager(m, () => {});
    const tickets = new TicketIssuer(randomBytes(32));
    const acts = createToolActivities({
      registry: new ToolRegistry(createExtensionTools(m, mgr)),
      manifest: m,
      tickets,
    });
    const env = new MockActivityEnvironment({ activityId: 'ek-direct' });
    // A ticket the worker issued to the mock activity's run: the lease is the one thing missing.
    const ids = { workflowId: 'test', runId: '00000000-0000-0000-0000-000000000000' };
    const ticket = tickets.issue(ids, { principal: 'p', groups: [] }, ['tool:ext:alpha:add_entry'], [], []);
    const err = await env
      .run(acts.performTool, {
        toolId: 'ext:alpha:add_entry',
        args: { account: 'a', amount_cents: 1 },
        principal: 'p',
        ticket: ticket.permits['tool:ext:alpha:add_entry']!,
      })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({
      type: 'ToolUnavailable',
      nonRetryable: true,
      message: expect.stringContaining('extension-runtime lease'),
    });
    expect(started(pids)).toEqual([]);
    expect(mgr.starts).toEqual([]);
  });

  it('with the lease, a run using one of three extensions starts exactly that one, and records the lease lifecycle', async () => {
    const account = `acct-${randomUUID()}`;
    const { result, workflowId } = await run(
      [
        { toolId: 'ext:alpha:add_entry', args: { account, amount_cents: 250, memo: 'ext' } },
        { toolId: 'ext:alpha:add_entry', args: { account, amount_cents: 300, memo: 'ext' } },
      ],
      [EXTENSION_RUNTIME],
    );
    expect(result.status).toBe('completed');
    expect(started(pidDir).map((f) => f.split('-')[0])).toEqual(['alpha']);
    expect(extensions.starts.map((s) => s.plugin)).toEqual(['alpha']);
    console.log(
      `extension start: ${extensions.starts[0]!.ms} ms (spawn, MCP initialize, list and verify tools); processes started for a run declaring 3 extensions and using 1: ${started(pidDir).length}`,
    );
    expect(result.journal[0]!.lease).toEqual({
      id: 'lease:alpha:0',
      states: ['granted', 'started', 'committed', 'released'],
    });
    expect(result.journal[1]!.lease).toEqual({ id: 'lease:alpha:1', states: ['granted', 'committed', 'released'] });
    const memos = (await historyOf(h.client, workflowId)).filter(
      (e) => e.workflowPropertiesModifiedEventAttributes,
    ).length;
    expect(memos).toBeGreaterThanOrEqual(3);
    const desc = await h.client.workflow.getHandle(workflowId).describe();
    expect(desc.memo).toEqual({
      toolplaneLeases: {
        'lease:alpha:0': 'granted → started → committed → released',
        'lease:alpha:1': 'granted → committed → released',
      },
    });
    expect(logs.some((l) => /^\[ext:alpha\] ledger server alpha up/.test(l))).toBe(true);
  });

  it('restarts a crashed extension on the next authorised call, and stops an idle one', async () => {
    const pidFile = started(pidDir).find((f) => f.startsWith('alpha-'))!;
    const pid = Number(pidFile.replace(/^alpha-|\.pid$/g, ''));
    process.kill(pid, 'SIGKILL');
    await waitFor('the worker to notice its extension died', 60_000, () => !extensions.isRunning('alpha'));
    const { result } = await run(
      [{ toolId: 'ext:alpha:add_entry', args: { account: 'after-crash', amount_cents: 1 } }],
      [EXTENSION_RUNTIME],
    );
    expect(result.status).toBe('completed');
    expect(extensions.starts.map((s) => s.plugin)).toEqual(['alpha', 'alpha']);
    // The log line comes once its process has closed, after it stopped counting as running.
    await waitFor('the idle extension to be stopped', 60_000, () => logs.includes('[ext:alpha] stopped (idle)'));
    expect(extensions.isRunning('alpha')).toBe(false);
  });
});
