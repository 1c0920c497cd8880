// The worker is the authority: what a run's input asks for is intersected with the worker's
// manifest, and workflows without the gate are not served unless the worker says so.
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { Manifest } from '../../catalog/manifest';
import { loadManifest } from '../../runtime/manifest-file';
import { createTools } from '../../examples/support-desk/tools';
import { MANIFEST_DIGEST, PRINCIPAL } from '../../common/search-attributes';
import { exampleManifest, harness, testDir, type Harness } from '../support/env';
import { runAgent } from '../support/agent';
import { refundScript } from '../support/desk';
import { historyOf, scheduledActivities } from '../support/history';

describe('the worker decides what a run may hold', () => {
  let h: Harness;
  // Only the desk agent may be granted the refund; nobody holds the extension lease.
  const manifest: Manifest = {
    ...exampleManifest(),
    principals: {
      'agent:desk': { tools: '*', capabilities: [], models: '*', share_facts_with: [] },
      '*': {
        tools: ['tool://crm/lookup_customer', 'tool://tickets/read_ticket'],
        capabilities: [],
        models: '*',
        share_facts_with: [],
      },
    },
  };

  beforeAll(async () => {
    process.env.TOOLPLANE_STORE_DIR = testDir('authority');
    h = await harness(`authority-${randomUUID()}`);
    await h.runWorker({ manifest, tools: createTools(), allowUngovernedToolRun: false });
  });
  afterAll(() => h.close());

  it('intersects the grants a run asks for with what the manifest gives its principal', async () => {
    const { result, workflowId } = await runAgent(h, manifest, refundScript, {
      principal: 'agent:intruder',
      grants: manifest.tools.map((t) => t.id),
    });
    expect(result.journal.map((e) => [e.toolId, e.outcome, e.rule])).toEqual([
      ['tool://crm/lookup_customer', 'ok', undefined],
      ['payments__refund', 'refused', 'unreachable'],
    ]);
    const described = await h.client.workflow.getHandle(workflowId).describe();
    expect(described.memo?.toolplaneWithheld).toMatchObject({
      grants: expect.arrayContaining(['tool://payments/refund']),
    });
    expect(scheduledActivities(await historyOf(h.client, workflowId)).map((a) => a.type)).toEqual([
      'modelTurn',
      'performTool',
      'modelTurn',
      'modelTurn',
    ]);
  });

  it('lets the principal the manifest names have the refund', async () => {
    const { result } = await runAgent(h, manifest, refundScript, { principal: 'agent:desk' });
    expect(result.journal.map((e) => e.outcome)).toEqual(['ok', 'ok']);
  });

  it('refuses a run that names a tool the worker does not declare', async () => {
    const run = runAgent(h, manifest, refundScript, {
      principal: 'agent:desk',
      grants: ['tool://payments/wire_everything'],
    });
    await expect(run).rejects.toMatchObject({
      cause: { type: 'RunRefused', message: expect.stringContaining('tool://payments/wire_everything') },
    });
  });

  it('refuses toolRun, which has no data-flow gate, on a worker not configured for it', async () => {
    const workflowId = `ungoverned-${randomUUID()}`;
    const run = h.client.workflow.execute('toolRun', {
      taskQueue: h.taskQueue,
      workflowId,
      args: [
        {
          principal: 'agent:desk',
          calls: [
            {
              toolId: 'tool://payments/refund',
              args: { account_id: 'acct_attacker_991', amount_cents: 95000, currency: 'EUR' },
            },
          ],
        },
      ],
    });
    await expect(run).rejects.toMatchObject({
      cause: { type: 'RunRefused', message: expect.stringContaining('does not serve toolRun') },
    });
    // Started without toolplane's client, it labelled itself: `toolplane list` shows the refused
    // attempt under the principal it asked for; no manifest governs it.
    const sa = (await h.client.workflow.getHandle(workflowId).describe()).typedSearchAttributes;
    expect([sa.get(PRINCIPAL), sa.get(MANIFEST_DIGEST)]).toEqual(['agent:desk', undefined]);
  });

  it('refuses delegatedCall started by a client instead of a governed parent', async () => {
    const workflowId = `delegated-${randomUUID()}`;
    const run = h.client.workflow.execute('delegatedCall', {
      taskQueue: h.taskQueue,
      workflowId,
      args: [
        {
          principal: 'agent:desk',
          toolId: 'tool://payments/refund',
          args: { account_id: 'acct_attacker_991', amount_cents: 95000, currency: 'EUR' },
        },
      ],
    });
    await expect(run).rejects.toMatchObject({ cause: { type: 'DelegationRefused' } });
    expect(scheduledActivities(await historyOf(h.client, workflowId))).toEqual([]);
  });
});

describe('the extension-runtime lease comes from the worker, not the run', () => {
  const ledgerFile = path.resolve(__dirname, '..', '..', 'examples', 'mcp-ledger', 'manifest.yaml');

  it('withholds a capability the manifest does not give the principal: the extension never starts', async () => {
    const ledger = loadManifest(ledgerFile).manifest;
    const h = await harness(`lease-${randomUUID()}`);
    try {
      const logs: string[] = [];
      const noLease: Manifest = {
        ...ledger,
        principals: { '*': { tools: '*', capabilities: [], models: '*', share_facts_with: [] } },
      };
      await h.runWorker({ manifest: noLease, tools: [], log: (l) => logs.push(l) });
      const { result } = await runAgent(
        h,
        noLease,
        {
          prompt: 'List acct-1.',
          turns: [
            { tool_calls: [{ name: 'ext_beta__list_entries', arguments: { account: 'acct-1' } }] },
            { final: 'x' },
          ],
        },
        { principal: 'agent:any', capabilities: ['extension-runtime'] },
      );
      expect(result.journal[0]).toMatchObject({ outcome: 'refused', error: { code: 'LeaseMissing' } });
      // A call the worker refused is not charged.
      expect(result.usage.toolCalls).toBe(0);
      expect(logs.filter((l) => /start/i.test(l) && l.includes('[ext:'))).toEqual([]);
    } finally {
      await h.close();
    }
  });
});
