// A deferred extension that changed its definition, or cannot start: nothing sent, started at most once, not retried.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ExtensionManager } from '../../activities/extensions/extension-manager';
import { EXTENSION_RUNTIME } from '../../catalog/capabilities';
import { loadManifest } from '../../runtime/manifest-file';
import type { Manifest, ServerDecl } from '../../catalog/manifest';
import type { ToolRunResult } from '../../workflows/tool-run';
import { harness, testDir, type Harness } from '../support/env';
import { historyOf } from '../support/history';

const root = path.resolve(__dirname, '..', '..');
const base: Manifest = loadManifest(path.join(root, 'examples', 'mcp-ledger', 'manifest.yaml')).manifest;
const started = (pidDir: string) => (fs.existsSync(pidDir) ? fs.readdirSync(pidDir) : []);

/** The alpha extension changed: another server env, or another command. */
function withAlpha(change: (s: Extract<ServerDecl, { kind: 'extension' }>) => ServerDecl): Manifest {
  const alpha = base.servers.alpha as Extract<ServerDecl, { kind: 'extension' }>;
  return { ...base, servers: { ...base.servers, alpha: change(alpha) } };
}

describe('deferred extensions that must not be sent to', () => {
  const rigs: { h: Harness; extensions: ExtensionManager }[] = [];
  afterAll(async () => {
    for (const r of rigs) {
      await r.extensions.stopAll();
      await r.h.close();
    }
  });

  async function run(manifest: Manifest) {
    const extensions = new ExtensionManager(manifest, () => {});
    const h = await harness(`extfail-${randomUUID()}`);
    await h.runWorker({ manifest, tools: [], extensions, log: () => {} });
    rigs.push({ h, extensions });
    const workflowId = `extfail-${randomUUID()}`;
    const calls = [
      { toolId: 'ext:alpha:add_entry', args: { account: `acct-${randomUUID()}`, amount_cents: 1, memo: 'x' } },
    ];
    const result: ToolRunResult = await h.client.workflow.execute('toolRun', {
      taskQueue: h.taskQueue,
      workflowId,
      args: [
        {
          manifest,
          grants: manifest.tools.map((t) => t.id),
          principal: 'agent:test',
          calls,
          capabilities: [EXTENSION_RUNTIME],
          continueOnError: true,
        },
      ],
    });
    const events = await historyOf(h.client, workflowId);
    const performs = new Set(
      events
        .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'performTool')
        .map((e) => String(e.eventId)),
    );
    const attempts = events
      .filter((e) => performs.has(String(e.activityTaskStartedEventAttributes?.scheduledEventId)))
      .map((e) => e.activityTaskStartedEventAttributes!.attempt);
    return { result, extensions, scheduled: performs.size, attempts };
  }

  it('refuses a call whose extension serves a changed definition (rug pull): rule digest, both digests, started once and stopped, never retried', async () => {
    const pidDir = testDir('ext-rug');
    process.env.TOOLPLANE_STORE_DIR = testDir('ext-rug-store');
    const manifest = withAlpha((s) => ({ ...s, env: { ...s.env, LEDGER_PID_DIR: pidDir, LEDGER_RUGPULL: '1' } }));
    const { result, extensions, scheduled, attempts } = await run(manifest);
    expect(result.journal[0]).toMatchObject({
      decision: 'refused',
      rule: 'digest',
      outcome: 'refused',
      reason: expect.stringMatching(/ext:alpha:add_entry: declared sha256:[0-9a-f]{64}, served sha256:[0-9a-f]{64}/),
    });
    expect({ scheduled, attempts }).toEqual({ scheduled: 1, attempts: [1] });
    expect(started(pidDir)).toHaveLength(1);
    expect(extensions.starts).toEqual([]);
    expect(extensions.isRunning('alpha')).toBe(false);
  });

  it('reports an extension that cannot start as a failure where nothing was sent, not in doubt, and does not retry it', async () => {
    const manifest = withAlpha((s) => ({ ...s, command: process.execPath, args: ['-e', 'process.exit(3)'] }));
    const { result, extensions, scheduled, attempts } = await run(manifest);
    expect(result.journal[0]).toMatchObject({
      decision: 'allowed',
      outcome: 'failed',
      recovery: 'none',
      error: { message: expect.stringMatching(/could not start, so nothing was sent/) },
    });
    expect({ scheduled, attempts }).toEqual({ scheduled: 1, attempts: [1] });
    expect(extensions.starts).toEqual([]);
  });
});
