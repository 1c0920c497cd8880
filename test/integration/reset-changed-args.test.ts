// An operator resets a run after a fix, and the model now asks for another refund (issue 50): the lookup,
// the same call, is adopted from the base and not sent; the refund with its changed arguments is a new
// effect under its own key, sent once; the base's refund is not sent again; `toolplane show` says which
// is which. The model is an OpenAI-compatible server in the test: a reset run asks it again.
import { randomUUID } from 'node:crypto';
import type { Manifest } from '../../catalog/manifest';
import type { JournalEntry } from '../../common/journal';
import { formatEffects, loadEffects } from '../../inspect/journal';
import type { AgentRunResult } from '../../workflows/agent/run';
import { supportDesk } from '../support/desk';
import { exampleManifest, harness, testDir, type Harness } from '../support/env';
import { startFakeChat, type ChatRequest, type Reply } from '../support/fake-chat';
import { keylessRefunds, REFUND, resetTo } from '../support/reset';

const LOOKUP = 'tool://crm/lookup_customer';

describe('a reset run whose model asks for other arguments', () => {
  const dir = testDir('reset-changed-args');
  const desk = supportDesk(dir);
  let h: Harness;
  let fake: Awaited<ReturnType<typeof startFakeChat>>;
  /** What the model refunds: changed between the run and its reset, as a fix would. */
  let amountCents = 2500;

  /** Looks the customer up, refunds, answers: by how many tool results the conversation holds. */
  const agent = (req: ChatRequest): Reply => {
    const results = req.body.messages.filter((m) => m.role === 'tool').length;
    if (results === 0)
      return { tool_calls: [{ id: 'c1', name: 'crm__lookup_customer', arguments: '{"email":"alice@example.com"}' }] };
    if (results === 1) {
      const args = { account_id: 'acct_alice_001', amount_cents: amountCents, currency: 'EUR' };
      return { tool_calls: [{ id: 'c2', name: 'payments__refund', arguments: JSON.stringify(args) }] };
    }
    return { content: 'refunded' };
  };

  /**
   * The desk with a refund provider that keeps no keys, and the model endpoint the worker declares. The
   * refund is built in code with a field set to `undefined` (the oddity): its digest is the one
   * its history holds, so the reset run's new refund is sent, not refused as declared otherwise.
   */
  const manifest = (baseUrl: string): Manifest => {
    const m = keylessRefunds(exampleManifest(), { keyless_repeat_window: undefined });
    return {
      ...m,
      models: {
        fake: {
          provider: 'openai-compatible',
          base_url: baseUrl,
          api_key_env: 'TOOLPLANE_TEST_MODEL_KEY',
          models: ['gpt-test'],
        },
      },
    };
  };

  beforeAll(async () => {
    fake = await startFakeChat(agent);
    process.env.TOOLPLANE_TEST_MODEL_KEY = 'sk-reset-test';
    h = await harness(`reset-changed-args-${randomUUID()}`);
    await h.runWorker({ manifest: manifest(fake.baseUrl), tools: desk.tools });
  });
  afterAll(async () => {
    await h?.close();
    await fake?.close();
  });

  const entryOf = (journal: JournalEntry[], toolId: string) => journal.find((e) => e.toolId === toolId)!;

  it('the changed refund is a new effect, sent once; the same lookup is adopted; show tells them apart', async () => {
    const workflowId = `reset-changed-${randomUUID()}`;
    const base: AgentRunResult = await h.client.workflow.execute('agentRun', {
      taskQueue: h.taskQueue,
      workflowId,
      args: [
        {
          // Both amounts are the principal's words: the fix changes which one the model sends.
          prompt: 'Refund 25 EUR to alice@example.com, or 30 EUR if the parcel was also damaged.',
          principal: 'agent:test',
          grants: [LOOKUP, REFUND],
          model: { endpoint: 'fake', model: 'gpt-test' },
          fullJournal: true,
        },
      ],
    });
    expect(base.status).toBe('completed');
    const baseRun = (await h.client.workflow.getHandle(workflowId).describe()).runId;
    const baseRefund = entryOf(base.journal, REFUND);
    expect(baseRefund).toMatchObject({ outcome: 'ok' });
    expect(desk.payments.all().map((p) => p.amountCents)).toEqual([2500]);

    amountCents = 3000;
    const runId = await resetTo(h.client, workflowId, baseRun, { task: 0 }, 'the refund amount was fixed');
    const reset: AgentRunResult = await h.client.workflow.getHandle(workflowId, runId).result();
    expect(reset.status).toBe('completed');
    // The lookup, the same call: adopted. The refund's arguments changed: another key, sent once.
    expect(entryOf(reset.journal, LOOKUP)).toMatchObject({ outcome: 'ok', adoptedFrom: { runId: baseRun } });
    const refund = entryOf(reset.journal, REFUND);
    expect(refund).toMatchObject({ outcome: 'ok', attempts: 1 });
    expect(refund.adoptedFrom).toBeUndefined();
    expect(refund.effectKey).not.toBe(baseRefund.effectKey);
    // The provider, which keeps no keys: the first refund once, and the new one once.
    expect(desk.payments.all().map((p) => p.amountCents)).toEqual([2500, 3000]);
    expect(desk.payments.repeats()).toBe(0);

    const { effects } = await loadEffects(h.client, workflowId);
    expect(effects.find((v) => v.toolId === REFUND)?.afterReset).toEqual({ baseRunId: baseRun, base: 'not made' });
    expect(effects.find((v) => v.toolId === LOOKUP)?.afterReset).toBeUndefined();
    const shown = formatEffects(effects).join('\n');
    expect(shown).toContain(`[a new effect: run ${baseRun}, reset from, never made this call`);
    expect(shown).toContain(`[adopted from run ${baseRun} event `);
  });
});
