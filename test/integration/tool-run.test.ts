import { randomUUID } from 'node:crypto';
import { createTools } from '../../examples/support-desk/tools';
import { paymentsStore } from '../../examples/support-desk/payments-store';
import { createCloseTicket } from '../../examples/support-desk/tools/close-ticket';
import { lookupCustomer } from '../../examples/support-desk/tools/crm';
import { createSendEmail } from '../../examples/support-desk/tools/mail';
import { createRefund } from '../../examples/support-desk/tools/payments';
import { readTicket } from '../../examples/support-desk/tools/tickets';
import { KeyedLog } from '../../examples/support-desk/keyed-log';
import type { ToolRunResult } from '../../workflows/tool-run';
import { effectKey, idempotencyKey } from '../../common/effect-key';
import { manifestDigest } from '../../catalog/digest';
import { exampleManifest, harness, testDir, type Harness } from '../support/env';
import { historyOf, scheduledActivities } from '../support/history';
import { supportDesk } from '../support/desk';
import { defaultPayloadConverter } from '@temporalio/common';
import { startToolRun } from '../../client';
import { ActivityName } from '../../common/names';
import { REFUSALS } from '../../common/search-attributes';

describe('a tool run on a real Temporal server', () => {
  let h: Harness;
  const manifest = exampleManifest();
  const grants = manifest.tools.map((t) => t.id);
  const storeDir = testDir('tool-run');
  const { payments, tools } = supportDesk(storeDir);

  beforeAll(async () => {
    h = await harness(`tool-run-${randomUUID()}`);
  });
  afterAll(() => h.close());

  it('performs each call once as an activity keyed by its effect key and labelled with its tool', async () => {
    const worker = await h.startWorker({ manifest, tools });
    const workflowId = `tool-run-${randomUUID()}`;
    const refundArgs = { account_id: 'acct_alice_001', amount_cents: 2500, currency: 'EUR', memo: 'duplicate charge' };
    const result: ToolRunResult = await worker.runUntil(
      h.client.workflow.execute('toolRun', {
        taskQueue: h.taskQueue,
        workflowId,
        args: [
          {
            manifest,
            grants,
            principal: 'agent:test',
            calls: [
              { toolId: 'tool://crm/lookup_customer', args: { email: 'alice@example.com' } },
              { toolId: 'tool://payments/refund', args: refundArgs },
            ],
          },
        ],
      }),
    );

    expect(result.status).toBe('completed');
    expect(result.outputs[0]).toMatchObject({ account_id: 'acct_alice_001' });
    const key = effectKey({ tool: 'tool://payments/refund', args: refundArgs }, 1);
    expect(result.journal[1]).toMatchObject({
      toolId: 'tool://payments/refund',
      effectKey: key,
      outcome: 'ok',
      attempts: 1,
    });

    const landed = payments.all();
    expect(landed).toHaveLength(1);
    expect(landed[0]).toMatchObject({
      account: 'acct_alice_001',
      amountCents: 2500,
      idempotencyKey: idempotencyKey(workflowId, key),
    });

    const scheduled = scheduledActivities(await historyOf(h.client, workflowId));
    expect(scheduled.map((s) => s.type)).toEqual(['performTool', 'performTool']);
    expect(scheduled[1]!.activityId).toBe(key);
    // The refund changes the world: the timeline labels it. The lookup shows its tool in its input.
    expect(scheduled[1]!.summary).toBe('payments/refund #1');
    expect(scheduled[0]!.summary).toBeUndefined();
    // What the worker finds in the run's opening does not travel with each call: its MAC, the declaration,
    // and whom the call acts for (the opening's principal).
    expect(scheduled[1]!.input).toEqual({ toolId: 'tool://payments/refund', args: refundArgs });
  });

  it('refuses an undeclared tool and an ungranted one without scheduling anything', async () => {
    const worker = await h.startWorker({ manifest, tools });
    const workflowId = `tool-run-${randomUUID()}`;
    const result: ToolRunResult = await worker.runUntil(
      h.client.workflow.execute('toolRun', {
        taskQueue: h.taskQueue,
        workflowId,
        args: [
          {
            manifest,
            grants: ['tool://crm/lookup_customer'],
            principal: 'agent:test',
            continueOnError: true,
            calls: [
              { toolId: 'tool://payments/wire_all_funds', args: {} },
              { toolId: 'tool://payments/refund', args: { account_id: 'a', amount_cents: 1, currency: 'EUR' } },
              { toolId: 'tool://crm/lookup_customer', args: { email: 42 } },
            ],
          },
        ],
      }),
    );
    expect(result.journal.map((e) => [e.decision, e.rule])).toEqual([
      ['refused', 'unreachable'],
      ['refused', 'unreachable'],
      ['refused', 'schema'],
    ]);
    expect(result.journal[0]!.reason).toContain('undeclared');
    expect(result.journal[1]!.reason).toContain('ungranted');
    expect(result.journal[2]!.reason).toContain('/email');
    expect(scheduledActivities(await historyOf(h.client, workflowId))).toEqual([]);
  });

  it('publishes its status only when there is something to report: a quiet run spends no events on it', async () => {
    const worker = await h.startWorker({ manifest, tools });
    const statusEvents = async (calls: { toolId: string; args: Record<string, unknown> }[]) => {
      const workflowId = `tool-run-status-${randomUUID()}`;
      const handle = await startToolRun(
        h.client,
        { principal: 'agent:test', calls, continueOnError: true },
        { taskQueue: h.taskQueue, workflowId },
      );
      await handle.result();
      const events = await historyOf(h.client, workflowId);
      return {
        upserts: events.flatMap((e) => {
          const fields = e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields ?? {};
          const refusals = fields.ToolplaneRefusals;
          return refusals ? [defaultPayloadConverter.fromPayload<number>(refusals)] : [];
        }),
        patches: events.flatMap((e) => {
          const data = e.markerRecordedEventAttributes?.details?.['patch-data']?.payloads?.[0];
          return data ? [defaultPayloadConverter.fromPayload<{ id: string }>(data).id] : [];
        }),
        refusals: (await handle.describe()).typedSearchAttributes.get(REFUSALS),
        activities: events.flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? []),
        localActivities: events.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity')
          .length,
      };
    };
    const lookup = { toolId: 'tool://crm/lookup_customer', args: { email: 'alice@example.com' } };
    const wire = { toolId: 'tool://payments/wire_everything', args: {} };
    const [quiet, refused] = await worker.runUntil(async () => [
      await statusEvents([lookup, lookup]),
      await statusEvents([lookup, wire, lookup]),
    ]);

    // The client started it with no refusals, waiting for nobody; nothing changed, so nothing was upserted.
    // The worker's answer (what the run may hold) is a local activity: no activity of its own.
    expect(quiet).toEqual({
      upserts: [],
      patches: [],
      refusals: 0,
      activities: [ActivityName.Perform, ActivityName.Perform],
      localActivities: 1,
    });
    expect(refused).toMatchObject({ upserts: [1], patches: [], refusals: 1 });
  });

  it('the example tools match the example manifest', () => {
    expect(
      createTools()
        .map((t) => t.def().id)
        .sort(),
    ).toEqual(grants.slice().sort());
  });
});

describe('a run pinned to another manifest than the worker', () => {
  it('is refused by the worker before anything is sent; a declaration in the input is ignored', async () => {
    const h = await harness(`pinned-${randomUUID()}`);
    const manifest = exampleManifest();
    const dir = testDir('pinned');
    const payments = paymentsStore(dir);
    const worker = await h.startWorker({
      manifest,
      tools: [
        lookupCustomer,
        readTicket,
        createRefund(payments),
        createSendEmail(new KeyedLog(dir, 'outbox')),
        createCloseTicket(new KeyedLog(dir, 'closed')),
      ],
    });
    const laxer = {
      ...manifest,
      tools: manifest.tools.map((t) => (t.id === 'tool://payments/refund' ? { ...t, protected_fields: [] } : t)),
    };
    try {
      const run = worker.runUntil(
        h.client.workflow.execute('toolRun', {
          taskQueue: h.taskQueue,
          workflowId: `pinned-${randomUUID()}`,
          args: [
            {
              manifest: laxer,
              manifestDigest: manifestDigest(laxer),
              grants: ['tool://payments/refund'],
              principal: 'agent:test',
              calls: [
                {
                  toolId: 'tool://payments/refund',
                  args: { account_id: 'acct_x', amount_cents: 100, currency: 'EUR' },
                },
              ],
            },
          ],
        }),
      );
      await expect(run).rejects.toMatchObject({
        cause: { type: 'RunRefused', message: expect.stringContaining(`pinned to manifest ${manifestDigest(laxer)}`) },
      });
      expect(payments.all()).toEqual([]);
    } finally {
      await h.close();
    }
  });
});
