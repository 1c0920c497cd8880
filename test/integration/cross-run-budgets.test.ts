// Budgets across runs (issue 22): spend per payee and per principal, egress per destination, over a
// declared period, counted by one budget workflow per principal on the real dev server. What landed
// in the tool's store, what was refused and why, and what the budget workflow holds.
import { randomBytes, randomUUID } from 'node:crypto';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import type { Manifest, ToolDecl } from '../../catalog/manifest';
import { budgetWorkflowId } from '../../common/budget-id';
import { ToolFailedLanded } from '../../activities/tool-errors';
import type { Tool } from '../../activities/tool';
import { createTools as bankingTools, LANDLORD_IBAN } from '../../examples/banking/tools';
import { effectsStore } from '../../examples/worlds/fixture-tools';
import { loadManifest } from '../../runtime/manifest-file';
import type { BudgetState } from '../../common/budget-protocol';
import { budgetWindowsQuery, reserveBudgetUpdate, settleBudgetUpdate } from '../../common/budget-protocol';
import type { BudgetClaim } from '../../catalog/budget';
import { argumentBytes } from '../../workflows/gate/outbound';
import { runAgent } from '../support/agent';
import { harness, testDir, type Harness } from '../support/env';
import { historyOf, scheduledActivities } from '../support/history';
import { waitFor } from '../support/wait';
import { TicketIssuer } from '../../activities/identity/tickets';

/** The worker's ticket key, which this suite holds too: it signs the budget messages it sends by hand, as the worker does. */
const TICKET_KEY = randomBytes(32).toString('hex');
const tickets = new TicketIssuer(Buffer.from(TICKET_KEY, 'hex'));

const banking = loadManifest(path.resolve(__dirname, '..', '..', 'examples', 'banking', 'manifest.yaml')).manifest;
const SEND = 'tool://bank/send_money';

function withSend(change: (t: ToolDecl) => ToolDecl): Manifest {
  return { ...banking, tools: banking.tools.map((t) => (t.id === SEND ? change(t) : t)) };
}

/** 5,000.00 EUR a UTC day to any one payee, over every run of a principal; 5,000.00 per payee per run as today. */
const daily = withSend((t) => ({
  ...t,
  spend: { ...t.spend!, budgets: [{ period: '1d', per: 'payee', max_minor: { EUR: 500000 } }] },
}));

const pay = (cents: number, subject: string) => ({
  name: 'bank__send_money',
  arguments: { recipient: LANDLORD_IBAN, amount_cents: cents, subject },
});

/** One run paying once: the call's journal entry and where it went. */
async function payOnce(h: Harness, manifest: Manifest, principal: string, cents: number, subject: string) {
  const { result } = await runAgent(
    h,
    manifest,
    {
      prompt: `Pay ${(cents / 100).toFixed(2)} EUR to ${LANDLORD_IBAN} with the subject "${subject}".`,
      turns: [{ tool_calls: [pay(cents, subject)] }, { final: 'done' }],
    },
    { principal },
  );
  return result.journal.find((e) => e.toolId === SEND)!;
}

async function budgetOf(client: Client, principal: string): Promise<BudgetState> {
  return client.workflow.getHandle(budgetWorkflowId(principal)).query(budgetWindowsQuery);
}

/** The one window's counter for the landlord, as the budget workflow holds it. */
function landlord(state: BudgetState): { spent: string; reserved: string } | undefined {
  const windows = Object.values(state.windows).filter((w) => w.period === '1d');
  return windows[0]?.counters[`spend/EUR/payee/${LANDLORD_IBAN.toLowerCase()}`];
}

/** A test near midnight UTC would count in two windows: it waits for the new day instead. */
async function clearOfMidnight(): Promise<void> {
  const msToMidnight = 86_400_000 - (Date.now() % 86_400_000);
  if (msToMidnight < 180_000)
    await waitFor('the UTC day to turn', msToMidnight + 60_000, () => Date.now() % 86_400_000 < 600_000, 1000);
}

const WINDOW = /in the 1d \d{4}-\d\d-\d\dT00:00Z–\d{4}-\d\d-\d\dT00:00Z window/;

describe('budgets across runs', () => {
  const dir = testDir('budgets');
  const store = effectsStore(dir);
  let h: Harness;
  const landed = (subject: string) => store.all().filter((e) => e.tool === SEND && e.args.subject === subject);

  beforeAll(async () => {
    await clearOfMidnight();
    h = await harness(`budgets-${randomUUID()}`);
    // send_money fails after reaching the bank when its subject says so: nothing moved, the call failed.
    const tools = bankingTools(dir).map((t): Tool =>
      t.def().id !== SEND
        ? t
        : {
            ...t,
            async call(ctx, input) {
              if ((input as { subject?: string }).subject?.startsWith('fail'))
                throw new ToolFailedLanded('the bank declined the transfer');
              return t.call(ctx, input);
            },
          },
    );
    await h.runWorker({ manifest: daily, tools, ticketKey: TICKET_KEY });
  });
  afterAll(() => h?.close());

  it('10 concurrent runs of 1,000.00 to one payee under a 5,000.00 daily cap: exactly five land, five are refused', async () => {
    const principal = `agent:budget-${randomUUID()}`;
    const subject = `rent-${randomUUID().slice(0, 8)}`;
    const entries = await Promise.all(Array.from({ length: 10 }, () => payOnce(h, daily, principal, 100000, subject)));
    const ok = entries.filter((e) => e.outcome === 'ok');
    const refused = entries.filter((e) => e.outcome === 'refused');
    console.log(
      `10 concurrent runs: ${ok.length} landed, ${refused.length} refused; store holds ${landed(subject).length}`,
    );
    expect(ok).toHaveLength(5);
    expect(refused).toHaveLength(5);
    for (const e of refused) {
      expect(e).toMatchObject({ decision: 'refused', rule: 'spend', error: { code: 'Refused' } });
      expect(e.reason).toMatch(WINDOW);
      expect(e.reason).toMatch(/over its 1d budget of 500000/);
    }
    expect(landed(subject)).toHaveLength(5);
    expect(landed(subject).every((e) => e.args.amount_cents === 100000)).toBe(true);
    expect(landed(subject).length * 100000).toBeLessThanOrEqual(500000);
    expect(landlord(await budgetOf(h.client, principal))).toEqual({ spent: '500000', reserved: '0' });
  });

  it("two runs of 4,000.00 to one payee against a 5,000.00 per-payee daily budget: one lands, one is refused (the issue's attack)", async () => {
    const principal = `agent:budget-${randomUUID()}`;
    const subject = `attack-${randomUUID().slice(0, 8)}`;
    const first = await payOnce(h, daily, principal, 400000, subject);
    const second = await payOnce(h, daily, principal, 400000, subject);
    expect(first).toMatchObject({ outcome: 'ok' });
    expect(second).toMatchObject({ decision: 'refused', rule: 'spend' });
    expect(second.reason).toMatch(WINDOW);
    expect(second.reason).toMatch(/to 800000 \(400000 spent, 0 reserved\)/);
    expect(landed(subject)).toHaveLength(1);
  });

  it('a failing send gives its reservation back: the next run may pay, the one after is refused', async () => {
    const principal = `agent:budget-${randomUUID()}`;
    const subject = `later-${randomUUID().slice(0, 8)}`;
    const failed = await payOnce(h, daily, principal, 400000, `fail-${subject}`);
    expect(failed).toMatchObject({ outcome: 'failed', error: { code: 'Failed' } });
    expect(landlord(await budgetOf(h.client, principal))).toEqual({ spent: '0', reserved: '0' });
    const next = await payOnce(h, daily, principal, 400000, subject);
    expect(next).toMatchObject({ outcome: 'ok' });
    const after = await payOnce(h, daily, principal, 400000, subject);
    expect(after).toMatchObject({ decision: 'refused', rule: 'spend' });
    expect(landed(subject)).toHaveLength(1);
    const state = await budgetOf(h.client, principal);
    expect(landlord(state)).toEqual({ spent: '400000', reserved: '0' });
    expect(
      Object.values(state.reservations)
        .map((r) => r.status)
        .sort(),
    ).toEqual(['committed', 'refused', 'released']);
  });

  it('a tool without budgets across runs schedules no budget activity; one with them one reserve and one settle', async () => {
    const subject = `plain-${randomUUID().slice(0, 8)}`;
    const { workflowId } = await runAgent(
      h,
      daily,
      {
        prompt: `Pay 10.00 EUR to ${LANDLORD_IBAN} with the subject "${subject}".`,
        turns: [
          { tool_calls: [{ name: 'bank__get_balance', arguments: {} }] },
          { tool_calls: [pay(1000, subject)] },
          { final: 'done' },
        ],
      },
      { principal: `agent:budget-${randomUUID()}` },
    );
    const types = scheduledActivities(await historyOf(h.client, workflowId)).map((a) => a.type);
    expect(types.filter((t) => t === 'performTool')).toHaveLength(2);
    expect(types.filter((t) => t === 'reserveBudget')).toHaveLength(1);
    expect(types.filter((t) => t === 'settleBudget')).toHaveLength(1);
  });
  it('carries windows and reservation ids across continue-as-new: a reserve repeated after it is answered, not counted', async () => {
    const principal = `agent:budget-${randomUUID()}`;
    const workflowId = budgetWorkflowId(principal);
    const started = await h.client.workflow.start('budgetCounter', {
      taskQueue: h.taskQueue,
      workflowId,
      args: [{ maxHistoryEvents: 15 }],
    });
    const budget = h.client.workflow.getHandle(workflowId);
    const claims: BudgetClaim[] = [
      {
        rule: 'spend',
        counter: `spend/EUR/payee/${LANDLORD_IBAN.toLowerCase()}`,
        period: '1d',
        amount: '100000',
        limit: '500000',
        what: `EUR minor units paid to ${LANDLORD_IBAN.toLowerCase()}`,
      },
    ];
    const signed = (id: string) => {
      const m = { reservation: id, toolId: SEND, claims, issuedAt: Date.now() };
      return { ...m, mac: tickets.budgetReserveMac(workflowId, m) };
    };
    const sent = new Map<string, ReturnType<typeof signed>>();
    // A reserve repeated is the same message again (a retried activity): answered as recorded.
    const reserve = async (id: string) => {
      const m = sent.get(id) ?? signed(id);
      sent.set(id, m);
      try {
        return await budget.executeUpdate(reserveBudgetUpdate, { updateId: id, args: [m] });
      } catch (err) {
        const details = ((err as { cause?: { details?: unknown[] } }).cause?.details?.[0] ?? {}) as {
          reason?: string;
          answer?: unknown;
        };
        if (details.reason === 'already_reserved') return details.answer;
        throw err;
      }
    };
    for (const id of ['r0', 'r1', 'r2', 'r3', 'r4']) expect(await reserve(id)).toEqual({ ok: true });
    await waitFor('the budget workflow to continue as new', 30_000, async () => {
      const first = await h.client.workflow.getHandle(workflowId, started.firstExecutionRunId).describe();
      return first.status.name === 'CONTINUED_AS_NEW';
    });
    // r0's first run is closed: only the carried record can answer it.
    expect(await reserve('r0')).toEqual({ ok: true });
    expect(landlord(await budgetOf(h.client, principal))).toEqual({ spent: '0', reserved: '500000' });
    expect(await reserve('r5')).toMatchObject({ ok: false, rule: 'spend' });
    const proof = tickets.budgetSettleProof(workflowId, 'r0', 'commit');
    expect(
      await budget.executeUpdate(settleBudgetUpdate, { args: [{ reservation: 'r0', outcome: 'commit', proof }] }),
    ).toBe('committed');
    expect(landlord(await budgetOf(h.client, principal))).toEqual({ spent: '100000', reserved: '400000' });
    // The operator's view: each window's amounts in the memo, and no ToolplanePrincipal, so no run in `toolplane list`.
    const described = await budget.describe();
    expect(described.searchAttributes).not.toHaveProperty('ToolplanePrincipal');
    const memo = described.memo as {
      toolplaneBudget: { windows: Record<string, Record<string, unknown>>; held: { id: string }[] };
    };
    const [name, counters] = Object.entries(memo.toolplaneBudget.windows)[0]!;
    expect(name).toMatch(/^1d \d{4}-\d\d-\d\dT00:00Z–/);
    expect(counters).toEqual({ [claims[0]!.counter]: { spent: '100000', reserved: '400000' } });
    expect(memo.toolplaneBudget.held.map((r) => r.id).sort()).toEqual(['r1', 'r2', 'r3', 'r4']);
  });
});

describe('budgets across runs per principal and per destination', () => {
  const MUM = 'FR1420041010050500013M02606';
  const args = (recipient: string, subject: string) => ({ recipient, amount_cents: 1000, subject });
  // Two payments of the same shape fit the destination's daily bytes, a third does not.
  const EGRESS_CAP = 2 * argumentBytes(args(LANDLORD_IBAN, 'e-0')) + 10;
  const wide = withSend((t) => ({
    ...t,
    spend: { ...t.spend!, budgets: [{ period: '1d', per: 'principal', max_minor: { EUR: 150000 } }] },
    egress: {
      destination: 'sepa',
      max_bytes_per_run: 4096,
      budgets: [{ period: '1d', per: 'destination', max_bytes: EGRESS_CAP }],
    },
  }));
  const dir = testDir('budgets-wide');
  let h: Harness;
  beforeAll(async () => {
    await clearOfMidnight();
    h = await harness(`budgets-wide-${randomUUID()}`);
    await h.runWorker({ manifest: wide, tools: bankingTools(dir) });
  });
  afterAll(() => h?.close());

  async function payTo(principal: string, recipient: string, cents: number, subject: string) {
    const { result } = await runAgent(
      h,
      wide,
      {
        prompt: `Pay ${(cents / 100).toFixed(2)} EUR to ${recipient} with the subject "${subject}".`,
        turns: [
          { tool_calls: [{ name: 'bank__send_money', arguments: { recipient, amount_cents: cents, subject } }] },
          { final: 'done' },
        ],
      },
      { principal },
    );
    return result.journal.find((e) => e.toolId === SEND)!;
  }

  it('per principal: what one principal pays all payees together in a day', async () => {
    const principal = `agent:budget-${randomUUID()}`;
    expect(await payTo(principal, LANDLORD_IBAN, 100000, 'p-1')).toMatchObject({ outcome: 'ok' });
    const second = await payTo(principal, MUM, 100000, 'p-2');
    expect(second).toMatchObject({ decision: 'refused', rule: 'spend' });
    expect(second.reason).toMatch(/EUR minor units paid in all would bring .* total in the 1d .* window to 200000/);
    // Another principal has its own budget.
    expect(await payTo(`agent:budget-${randomUUID()}`, MUM, 100000, 'p-3')).toMatchObject({ outcome: 'ok' });
  });

  it('per destination: the bytes one principal sends one destination in a day', async () => {
    const principal = `agent:budget-${randomUUID()}`;
    expect(await payTo(principal, LANDLORD_IBAN, 1000, 'e-1')).toMatchObject({ outcome: 'ok' });
    expect(await payTo(principal, LANDLORD_IBAN, 1000, 'e-2')).toMatchObject({ outcome: 'ok' });
    const third = await payTo(principal, LANDLORD_IBAN, 1000, 'e-3');
    expect(third).toMatchObject({ decision: 'refused', rule: 'egress' });
    expect(third.reason).toMatch(
      new RegExp(`bytes sent to sepa would bring .* 1d .* over its 1d budget of ${EGRESS_CAP}`),
    );
    expect(
      effectsStore(dir)
        .all()
        .filter((e) => /^e-/.test(String(e.args.subject))),
    ).toHaveLength(2);
  });
});
