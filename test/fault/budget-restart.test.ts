// A worker process SIGKILLed between a call's budget reservation and its commit: the reservation is
// neither lost nor counted twice. Real worker processes (scripts/worker-process.ts), the suite's dev server.
import { randomUUID } from 'node:crypto';
import type { Manifest } from '../../catalog/manifest';
import { budgetWorkflowId } from '../../common/budget-id';
import { paymentsStore } from '../../examples/support-desk/payments-store';
import { writeManifest, type WorkerProcess } from '../../scripts/worker-process';
import { spawnTestWorker } from '../support/worker-process';
import type { BudgetState } from '../../common/budget-protocol';
import { budgetWindowsQuery } from '../../common/budget-protocol';
import type { ToolRunResult } from '../../workflows/tool-run';
import { exampleManifest, harness, testDir, type Harness } from '../support/env';
import { historyOf, scheduledActivities } from '../support/history';
import { waitFor } from '../support/wait';

const REFUND = 'tool://payments/refund';

/** Refunds of at most 1,000.00 a run, and 1,500.00 a UTC day to one account over every run of a principal. */
function budgeted(): Manifest {
  const m = exampleManifest();
  return {
    ...m,
    tools: m.tools.map((t) => ({
      ...t,
      timeouts: { ...t.timeouts, start_to_close: '2s' },
      ...(t.id === REFUND
        ? {
            spend: {
              amount: '/amount_cents',
              amount_unit: 'minor' as const,
              currency: '/currency',
              payee: '/account_id',
              max_minor_per_payee: { EUR: 100000 },
              budgets: [{ period: '1d', per: 'payee' as const, max_minor: { EUR: 150000 } }],
            },
          }
        : {}),
    })),
  };
}

describe('budgets across runs when the worker is killed between reserve and commit', () => {
  let h: Harness;
  const workers: WorkerProcess[] = [];
  beforeAll(async () => {
    const msToMidnight = 86_400_000 - (Date.now() % 86_400_000);
    // One UTC day per test: near midnight, wait for the new day.
    if (msToMidnight < 120_000)
      await waitFor('the UTC day to turn', msToMidnight + 60_000, () => Date.now() % 86_400_000 < 600_000, 1000);
    h = await harness('unused');
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop()));
  });
  afterAll(() => h.close());

  it.each([
    ['after the reservation, before the tool sent anything', 'before_call', 'reconciled_resent'],
    ['after the tool committed, before the activity completed', 'after_commit', 'reconciled_landed'],
  ])('killed %s: the payment lands once and counts once', async (_label, killAt, recovery) => {
    const dir = testDir('budget-kill');
    const manifestFile = writeManifest(dir, budgeted());
    const taskQueue = `budget-kill-${randomUUID()}`;
    const principal = `agent:budget-kill-${randomUUID()}`;
    const spawnWorker = (at?: string) => {
      const w = spawnTestWorker({
        manifestFile,
        taskQueue,
        storeDir: dir,
        killAt: at,
      });
      workers.push(w);
      return w;
    };
    const refund = (cents: number, memo: string) => ({
      toolId: REFUND,
      args: { account_id: 'acct_alice_001', amount_cents: cents, currency: 'EUR', memo },
    });
    const run = (cents: number, memo: string, workflowId = `budget-kill-${randomUUID()}`) =>
      h.client.workflow.start('toolRun', {
        taskQueue,
        workflowId,
        args: [{ principal, grants: [REFUND], calls: [refund(cents, memo)] }],
      });

    const first = await run(100000, 'first');
    const killed = spawnWorker(killAt);
    expect((await killed.exited).signal).toBe('SIGKILL');
    expect(killed.output()).toContain(`SIGKILL at ${killAt}`);
    spawnWorker();
    const result: ToolRunResult = await first.result();
    expect(result.journal[0]).toMatchObject({ outcome: 'ok', recovery });
    const budget = h.client.workflow.getHandle(budgetWorkflowId(principal));
    const counter = (s: BudgetState) => Object.values(s.windows)[0]?.counters['spend/EUR/payee/acct_alice_001'];
    expect(counter(await budget.query(budgetWindowsQuery))).toEqual({ spent: '100000', reserved: '0' });
    const scheduled = scheduledActivities(await historyOf(h.client, first.workflowId)).map((a) => a.type);
    expect(scheduled.filter((t) => t === 'reserveBudget')).toHaveLength(1);
    expect(scheduled.filter((t) => t === 'settleBudget')).toHaveLength(1);

    // Nothing lost: 1,000.00 more would pass 1,500.00. Nothing counted twice: 500.00 more fits exactly.
    const second: ToolRunResult = await (await run(100000, 'second')).result();
    expect(second.journal[0]).toMatchObject({ decision: 'refused', rule: 'spend' });
    expect(second.journal[0]!.reason).toMatch(
      /1d \d{4}-\d\d-\d\dT00:00Z–.* window to 200000 \(100000 spent, 0 reserved\)/,
    );
    const third: ToolRunResult = await (await run(50000, 'third')).result();
    expect(third.journal[0]).toMatchObject({ outcome: 'ok' });
    expect(counter(await budget.query(budgetWindowsQuery))).toEqual({ spent: '150000', reserved: '0' });
    expect(
      paymentsStore(dir)
        .all()
        .map((p) => [p.memo, p.amountCents]),
    ).toEqual([
      ['first', 100000],
      ['third', 50000],
    ]);
  });
});
