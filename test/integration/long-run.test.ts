// A long agent run continues as new and stays one run: the same decisions, budgets and effect keys
// as without continuing, the conversation by reference, and every history of the chain replays.
import { workflowSpanSinks } from '../../activities/telemetry';
import { randomUUID } from 'node:crypto';
import { defaultPayloadConverter } from '@temporalio/common';
import { Worker } from '@temporalio/worker';
import type { ScriptTurn } from '../../common/wire';
import { readJournal } from '../../client';
import { isRoutine } from '../../common/journal';
import { REFUSALS, TOOLS_CALLED } from '../../common/search-attributes';
import type { AgentRunResult } from '../../workflows/agent/run';
import { agentInput } from '../support/agent';
import { exampleManifest, harness, testDir, type Harness } from '../support/env';
import { scheduledActivities, type HistoryEvent } from '../support/history';
import { supportDesk } from '../support/desk';

const EMAILS = ['alice@example.com', 'bob@example.com', 'chen@example.com'];
const call = (name: string, args: Record<string, unknown>) => ({ name, arguments: args });

/**
 * 101 calls: the injected ticket, Bob's lookup and the attacker's refund first, then lookups four
 * at a time; near the end the attacker's refund again (its account came from the ticket, runs ago)
 * and Bob's own refund (his account came from the CRM, runs ago); the 101st call is past the run's
 * budget of 98 (a refused call costs nothing).
 */
function longScript(): { prompt: string; turns: ScriptTurn[] } {
  const turns: ScriptTurn[] = [
    { tool_calls: [call('tickets__read_ticket', { ticket_id: 'T-101' })] },
    {
      tool_calls: [
        call('crm__lookup_customer', { email: 'bob@example.com' }),
        call('payments__refund', { account_id: 'acct_attacker_991', amount_cents: 95000, currency: 'EUR' }),
      ],
    },
  ];
  let calls = 3;
  while (calls < 94) {
    turns.push({
      tool_calls: [0, 1, 2, 3].map((i) => call('crm__lookup_customer', { email: EMAILS[(calls + i) % 3]! })),
    });
    calls += 4;
  }
  turns.push({
    tool_calls: [
      call('payments__refund', { account_id: 'acct_attacker_991', amount_cents: 95000, currency: 'EUR' }),
      call('payments__refund', { account_id: 'ACCT_BOB_002', amount_cents: 1000, currency: 'EUR' }),
      call('crm__lookup_customer', { email: 'bob@example.com' }),
      call('crm__lookup_customer', { email: 'alice@example.com' }),
    ],
  });
  turns.push({ tool_calls: EMAILS.slice(0, 2).map((email) => call('crm__lookup_customer', { email })) });
  turns.push({ final: 'done' });
  return {
    prompt: 'Ticket T-101 is from bob@example.com. Refund his 10.00 EUR late fee, then check the customers.',
    turns,
  };
}

describe('a long agent run', () => {
  let h: Harness;
  const dir = testDir('long');
  const { payments, tools } = supportDesk(dir);
  const manifest = exampleManifest();

  beforeAll(async () => {
    h = await harness(`long-${randomUUID()}`);
    await h.runWorker({
      manifest,
      tools,
    });
  });
  afterAll(async () => {
    await h.close();
  });

  async function run(continueAsNewAfterEvents?: number, fullJournal = true) {
    const workflowId = `long-${randomUUID()}`;
    const result: AgentRunResult = await h.client.workflow.execute('agentRun', {
      taskQueue: h.taskQueue,
      workflowId,
      args: [
        agentInput(manifest, longScript(), { limits: { maxToolCalls: 98 }, continueAsNewAfterEvents, fullJournal }),
      ],
    });
    return { workflowId, result, journal: await readJournal(h.client, workflowId) };
  }

  /** The histories of the chain, oldest first. */
  async function chain(workflowId: string): Promise<HistoryEvent[][]> {
    const out: HistoryEvent[][] = [];
    let runId: string | undefined;
    for (;;) {
      const events = (await h.client.workflow.getHandle(workflowId, runId).fetchHistory()).events ?? [];
      out.unshift(events);
      runId = events[0]!.workflowExecutionStartedEventAttributes!.continuedExecutionRunId || undefined;
      if (!runId) return out;
    }
  }

  it('continues as new, decides every call as an uninterrupted run does, and shows as one run', async () => {
    const before = payments.all().length;
    const whole = await run();
    // The chain's results and carried journals count their routine calls (the default); the reader places them.
    const split = await run(120, false);

    const histories = await chain(split.workflowId);
    expect(histories.length).toBeGreaterThanOrEqual(3);
    expect(split.result.summary).toMatchObject({ runs: histories.length, calls: 101, refused: 3, allowed: 98 });
    expect(whole.result.summary).toMatchObject({ runs: 1, calls: 101, refused: 3, allowed: 98 });
    expect(split.result.usage).toEqual(whole.result.usage);
    expect(whole.result.journal).toHaveLength(101);
    expect(split.result.journal.length + split.result.routineCalls!).toBeLessThan(101);
    expect(split.result.journal.filter(isRoutine)).toEqual([]);

    // Operators see the chain's refusals on the latest run, not only its own.
    const described = await h.client.workflow.getHandle(split.workflowId).describe();
    expect(described.typedSearchAttributes.get(REFUSALS)).toBe(3);
    // And the tools the chain called, each upserted once, when first called: later runs start with the list.
    const called = ['tool://tickets/read_ticket', 'tool://crm/lookup_customer', 'tool://payments/refund'];
    expect(described.typedSearchAttributes.get(TOOLS_CALLED)).toEqual(called);
    const upserted = histories
      .flat()
      .flatMap(
        (e) =>
          e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields?.ToolplaneToolsCalled ?? [],
      )
      .map((p) => defaultPayloadConverter.fromPayload<string[]>(p));
    expect(upserted).toEqual(called.map((_, i) => called.slice(0, i + 1)));

    // One run to the reader: every call once, in order, with the same decisions and effect keys.
    const view = (j: typeof whole.journal) =>
      j.effects.map((e) => [e.position, e.toolId, e.effectKey, e.decision, e.rule ?? null, e.outcome]);
    expect(split.journal.effects).toHaveLength(101);
    expect(view(split.journal)).toEqual(view(whole.journal));
    const keys = split.journal.effects.flatMap((e) => (e.effectKey ? [e.effectKey] : []));
    expect(new Set(keys).size).toBe(keys.length);
    expect(split.journal.effects.filter((e) => e.decision === 'refused').map((e) => [e.toolId, e.rule])).toEqual([
      ['tool://payments/refund', 'protected_field:/account_id'],
      ['tool://payments/refund', 'protected_field:/account_id'],
      ['tool://crm/lookup_customer', 'limit:tool_calls'],
    ]);
    // Bob's refund went out once per run, as the CRM wrote his account, though the model retyped it.
    const landed = payments.all().slice(before);
    expect(landed.map((p) => [p.account, p.amountCents])).toEqual([
      ['acct_bob_002', 1000],
      ['acct_bob_002', 1000],
    ]);

    // Model turns name the conversation by reference: each input holds only what is new.
    for (const events of histories) {
      const turns = scheduledActivities(events).filter((a) => a.type === 'modelTurn');
      for (const t of turns.slice(1)) {
        expect(t.input).toMatchObject({ transcript: expect.stringMatching(/^sha256:/) });
        expect(t.input!.tools).toBeUndefined();
        // What is new: the last turn's tool results by position, or messages whole.
        const unread =
          ((t.input!.messages as unknown[] | undefined)?.length ?? 0) +
          ((t.input!.results as { values: unknown[] } | undefined)?.values.length ?? 0);
        expect(unread).toBeGreaterThan(0);
        expect(unread).toBeLessThanOrEqual(4);
        expect(t.input!.model).not.toHaveProperty('script');
      }
    }

    // Each history of the chain replays with the current code.
    for (const [i, events] of histories.entries())
      await Worker.runReplayHistory(
        { workflowBundle: { codePath: process.env.TOOLPLANE_TEST_BUNDLE! }, sinks: workflowSpanSinks() },
        { events },
        `${split.workflowId}#${i}`,
      );
  });

  it('refuses a run a client starts with carried state', async () => {
    const input = agentInput(manifest, longScript());
    const forged = { ...input, carry: { v: 1 } };
    await expect(
      h.client.workflow.execute('agentRun', {
        taskQueue: h.taskQueue,
        workflowId: `forged-${randomUUID()}`,
        args: [forged],
      }),
    ).rejects.toMatchObject({ cause: { type: 'RunRefused', message: expect.stringMatching(/carried state/) } });
  });
});
