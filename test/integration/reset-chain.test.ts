// A reset of a long run that continued as new (issue 50: chains are followed). The base chain refunded
// once in its first run and once in a later one; an operator resets the first run near its start. The
// reset run adopts the first refund, continues as new as the base did, and its successor adopts the
// second refund from the base's successor: the provider, which keeps no keys, holds two refunds.
import { randomUUID } from 'node:crypto';
import { Worker } from '@temporalio/worker';
import type { ScriptTurn } from '../../common/wire';
import type { AgentRunResult } from '../../workflows/agent/run';
import { readJournal } from '../../client';
import { agentInput } from '../support/agent';
import { supportDesk } from '../support/desk';
import { exampleManifest, harness, testDir, type Harness } from '../support/env';
import type { HistoryEvent } from '../support/history';
import { keylessRefunds, REFUND, resetTo } from '../support/reset';

const refund = (amount_cents: number) => ({
  name: 'payments__refund',
  arguments: { account_id: 'acct_alice_001', amount_cents, currency: 'EUR' },
});
const lookup = { name: 'crm__lookup_customer', arguments: { email: 'alice@example.com' } };

/** A refund, a dozen lookups (the history grows past the chain's limit), another refund. */
function chainScript(): { prompt: string; turns: ScriptTurn[] } {
  const turns: ScriptTurn[] = [{ tool_calls: [lookup] }, { tool_calls: [refund(2500)] }];
  for (let i = 0; i < 12; i++) turns.push({ tool_calls: [lookup] });
  turns.push({ tool_calls: [refund(1000)] }, { final: 'done' });
  return {
    prompt: 'Refund 25 EUR to alice@example.com, check her account a dozen times, then refund her 10 EUR.',
    turns,
  };
}

describe('a reset of a run that continued as new', () => {
  const desk = supportDesk(testDir('reset-chain'));
  const manifest = keylessRefunds(exampleManifest());
  let h: Harness;

  beforeAll(async () => {
    h = await harness(`reset-chain-${randomUUID()}`);
    await h.runWorker({ manifest, tools: desk.tools });
  });
  afterAll(async () => {
    await h?.close();
  });

  const refundsReceived = () => desk.payments.all().length + desk.payments.repeats();

  /** The runs of the chain that ends in `runId`, oldest first. */
  async function chainOf(workflowId: string, runId?: string): Promise<{ runId: string; events: HistoryEvent[] }[]> {
    const out: { runId: string; events: HistoryEvent[] }[] = [];
    let at = runId ?? (await h.client.workflow.getHandle(workflowId).describe()).runId;
    for (;;) {
      const events = (await h.client.workflow.getHandle(workflowId, at).fetchHistory()).events ?? [];
      out.unshift({ runId: at, events });
      const previous = events[0]!.workflowExecutionStartedEventAttributes!.continuedExecutionRunId;
      if (!previous) return out;
      at = previous;
    }
  }

  it("the reset chain's later runs adopt what the base chain's later runs did: no refund is sent twice", async () => {
    const workflowId = `reset-chain-${randomUUID()}`;
    const input = agentInput(manifest, chainScript(), { continueAsNewAfterEvents: 40 });
    const base: AgentRunResult = await h.client.workflow.execute('agentRun', {
      taskQueue: h.taskQueue,
      workflowId,
      args: [input],
    });
    expect(base.status).toBe('completed');
    const baseChain = await chainOf(workflowId);
    expect(baseChain.length).toBeGreaterThanOrEqual(2);
    expect(refundsReceived()).toBe(2);

    // The operator resets the chain's first run to its first workflow task.
    const first = baseChain[0]!;
    const resetRun = await resetTo(h.client, workflowId, first.runId, { task: 0 });
    const reset: AgentRunResult = await h.client.workflow.getHandle(workflowId, resetRun).result();
    expect(reset.status).toBe('completed');
    const resetChain = await chainOf(workflowId);
    expect(resetChain[0]!.runId).toBe(resetRun);
    expect(resetChain.length).toBeGreaterThanOrEqual(2);

    // Nothing was sent again: both refunds adopted, each from the base run that completed it.
    expect(refundsReceived()).toBe(2);
    // The chain's journal, as `toolplane show` reads it: every run of the reset chain.
    const { effects } = await readJournal(h.client, workflowId);
    const adopted = effects.filter((e) => e.toolId === REFUND).map((e) => e.adoptedFrom?.runId);
    // The first refund from the run the reset copied; the second from one of the base chain's later runs.
    const baseRuns = baseChain.map((r) => r.runId);
    expect(adopted).toHaveLength(2);
    expect(adopted[0]).toBe(first.runId);
    expect(baseRuns.slice(1)).toContain(adopted[1]);
    // Every run of the reset chain replays as it ran.
    for (const r of resetChain)
      await Worker.runReplayHistory(
        { workflowBundle: { codePath: process.env.TOOLPLANE_TEST_BUNDLE! } },
        await h.client.workflow.getHandle(workflowId, r.runId).fetchHistory(),
        r.runId,
      );
  });
});
