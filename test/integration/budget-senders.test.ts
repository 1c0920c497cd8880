// Budgets hold against the agent they limit (issue 51). The agent's service holds a run starter's
// credential, so it may send any update to `toolplane-budget/<principal>`: each of its messages
// below is refused (before history where the workflow can tell, else by the worker beside it),
// nothing is counted or given back, and the victim's real payments go on as the cap says. The
// banking example on the suite's dev server, a 5,000.00 EUR daily cap to one payee.
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {
  ApplicationFailure,
  WithStartWorkflowOperation,
  WorkflowUpdateFailedError,
  type Client,
} from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import type { Manifest, ToolDecl } from '../../catalog/manifest';
import { budgetWorkflowId } from '../../common/budget-id';
import { BUDGET_MESSAGE_REFUSED } from '../../common/budget-proof';
import {
  budgetWindowsQuery,
  releaseBudgetUpdate,
  reserveBudgetUpdate,
  settleBudgetUpdate,
  type BudgetState,
  type ReserveUpdate,
  type SettleUpdate,
} from '../../common/budget-protocol';
import type { Tool } from '../../activities/tool';
import { createTools as bankingTools, LANDLORD_IBAN } from '../../examples/banking/tools';
import { effectsStore } from '../../examples/worlds/fixture-tools';
import { loadManifest } from '../../runtime/manifest-file';
import { runAgent } from '../support/agent';
import { TicketIssuer } from '../../activities/identity/tickets';
import { main } from '../../cli';
import { harness, testAddress, testDir, type Harness } from '../support/env';
import { testIssuer, type TestIssuer } from '../support/identity';
import { historyOf, type HistoryEvent } from '../support/history';
import { waitFor } from '../support/wait';

const banking = loadManifest(path.resolve(__dirname, '..', '..', 'examples', 'banking', 'manifest.yaml')).manifest;
const SEND = 'tool://bank/send_money';
const COUNTER = `spend/EUR/payee/${LANDLORD_IBAN.toLowerCase()}`;

/** 5,000.00 EUR a UTC day to any one payee, over every run of a principal. */
const daily: Manifest = {
  ...banking,
  tools: banking.tools.map((t): ToolDecl =>
    t.id === SEND
      ? { ...t, spend: { ...t.spend!, budgets: [{ period: '1d', per: 'payee', max_minor: { EUR: 500000 } }] } }
      : t,
  ),
};

async function payOnce(h: Harness, principal: string, cents: number, subject: string) {
  const { result } = await runAgent(
    h,
    daily,
    {
      prompt: `Pay ${(cents / 100).toFixed(2)} EUR to ${LANDLORD_IBAN} with the subject "${subject}".`,
      turns: [
        {
          tool_calls: [
            { name: 'bank__send_money', arguments: { recipient: LANDLORD_IBAN, amount_cents: cents, subject } },
          ],
        },
        { final: 'done' },
      ],
    },
    { principal },
  );
  return result.journal.find((e) => e.toolId === SEND)!;
}

const budgetOf = (client: Client, principal: string): Promise<BudgetState> =>
  client.workflow.getHandle(budgetWorkflowId(principal)).query(budgetWindowsQuery);

function landlord(state: BudgetState) {
  return Object.values(state.windows).find((w) => w.period === '1d')?.counters[COUNTER];
}

/** What the budget workflow refused, by its reason: the update failed and said why (`accepted`: it took the message). */
async function refusal(p: Promise<unknown>): Promise<{ reason: string; message: string }> {
  try {
    await p;
  } catch (err) {
    if (!(err instanceof WorkflowUpdateFailedError)) throw err;
    const cause = err.cause;
    if (!(cause instanceof ApplicationFailure) || cause.type !== BUDGET_MESSAGE_REFUSED) throw err;
    return { reason: (cause.details?.[0] as { reason: string }).reason, message: cause.message };
  }
  return { reason: 'accepted', message: 'the budget workflow took the message' };
}

/** The updates the budget workflow accepted (what its history holds), by name, with their ids and arguments. */
function accepted(events: HistoryEvent[], name: string): { id: string; arg: Record<string, unknown> }[] {
  return events
    .map((e) => e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest)
    .filter((r) => r?.input?.name === name)
    .map((r) => ({
      id: r!.meta!.updateId!,
      arg: defaultPayloadConverter.fromPayload<Record<string, unknown>>(r!.input!.args!.payloads![0]!),
    }));
}

async function clearOfMidnight(): Promise<void> {
  const msToMidnight = 86_400_000 - (Date.now() % 86_400_000);
  if (msToMidnight < 180_000)
    await waitFor('the UTC day to turn', msToMidnight + 60_000, () => Date.now() % 86_400_000 < 600_000, 1000);
}

describe('budgets hold against the agent they limit', () => {
  const dir = testDir('budget-senders');
  const store = effectsStore(dir);
  const landed = (subject: string) => store.all().filter((e) => e.tool === SEND && e.args.subject === subject);
  let h: Harness;
  /** While the race runs: how many held reservations the releasing client had tried when this run began. */
  let racing: { before: number } | undefined;
  /** The held reservations the releasing client has tried. */
  const tried = new Set<string>();

  beforeAll(async () => {
    await clearOfMidnight();
    h = await harness(`budget-senders-${randomUUID()}`);
    // While the race runs, the bank takes as long as the releasing client needs to try the call's held reservation.
    const tools = bankingTools(dir).map((t): Tool =>
      t.def().id !== SEND
        ? t
        : {
            ...t,
            async call(ctx, input) {
              // Sent only once the releasing client has tried this run's held reservation.
              const race = racing;
              if (race)
                await waitFor('the releasing client to try this call', 20_000, () => tried.size > race.before, 20);
              return t.call(ctx, input);
            },
          },
    );
    await h.runWorker({ manifest: daily, tools });
  });
  afterAll(() => h?.close());

  it('ten 1,000.00 payments under a 5,000.00 daily cap beside a client releasing every held reservation: five land, five are refused, 5,000.00 spent', async () => {
    const principal = `agent:senders-${randomUUID()}`;
    const subject = `race-${randomUUID().slice(0, 8)}`;
    const budget = h.client.workflow.getHandle(budgetWorkflowId(principal));
    const reasons = new Map<string, string[]>();
    let stop = false;
    // The compromised agent service: polls the budget's query, releases whatever is held, as the issue measured.
    const releaser = (async () => {
      while (!stop) {
        const state = await budgetOf(h.client, principal).catch(() => undefined);
        for (const [id, r] of Object.entries(state?.reservations ?? {})) {
          if (r.status !== 'held' || reasons.has(id)) continue;
          const why: string[] = [];
          reasons.set(id, why);
          const plain: SettleUpdate = { reservation: id, outcome: 'release' } as SettleUpdate;
          why.push((await refusal(budget.executeUpdate(settleBudgetUpdate, { args: [plain] }))).reason);
          const forged = { ...plain, proof: 'AAAAAAAAAAAAAAAAAAAAAA' };
          why.push((await refusal(budget.executeUpdate(settleBudgetUpdate, { args: [forged] }))).reason);
          // The hand release without an operator's credential, or with a made-up one.
          const noCredential = { reservation: id } as never;
          why.push((await refusal(budget.executeUpdate(releaseBudgetUpdate, { args: [noCredential] }))).reason);
          tried.add(id);
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const entries = [];
    try {
      for (let i = 0; i < 10; i++) {
        racing = { before: tried.size };
        entries.push(await payOnce(h, principal, 100000, subject));
      }
    } finally {
      racing = undefined;
      stop = true;
      await releaser;
    }
    const ok = entries.filter((e) => e.outcome === 'ok');
    const refused = entries.filter((e) => e.outcome === 'refused');
    console.log(
      `beside the releasing client: ${ok.length} landed, ${refused.length} refused; ${reasons.size} held reservations tried, ` +
        `answered ${[...new Set([...reasons.values()].flat())].join(', ')}`,
    );
    expect(ok).toHaveLength(5);
    expect(refused).toHaveLength(5);
    for (const e of refused) expect(e).toMatchObject({ decision: 'refused', rule: 'spend' });
    expect(landed(subject)).toHaveLength(5);
    expect(landlord(await budgetOf(h.client, principal))).toEqual({ spent: '500000', reserved: '0' });
    // Each landed call's reservation was tried while held, and refused before it entered history.
    expect(reasons.size).toBeGreaterThanOrEqual(5);
    for (const why of reasons.values()) expect(why).toEqual(['malformed', 'bad_proof', 'malformed']);
    const events = await historyOf(h.client, budgetWorkflowId(principal));
    const settles = accepted(events, 'settleBudget');
    expect(settles.map((s) => s.id).every((id) => id.endsWith('.commit'))).toBe(true);
    expect(settles).toHaveLength(5);
    expect(accepted(events, 'releaseBudget')).toHaveLength(0);
    expect(accepted(events, 'reserveBudget')).toHaveLength(10);
  });

  it("a forged reserve against a victim's budget counts nothing; the victim's real payment goes through", async () => {
    const victim = `agent:victim-${randomUUID()}`;
    const subject = `victim-${randomUUID().slice(0, 8)}`;
    // The victim has paid once: the budget workflow exists and its history holds a real reserve and settle.
    expect(await payOnce(h, victim, 100000, `${subject}-0`)).toMatchObject({ outcome: 'ok' });
    const budget = h.client.workflow.getHandle(budgetWorkflowId(victim));
    const before = await budgetOf(h.client, victim);
    const events = await historyOf(h.client, budgetWorkflowId(victim));
    const realReserve = accepted(events, 'reserveBudget')[0]!.arg as unknown as ReserveUpdate;
    const realSettle = accepted(events, 'settleBudget')[0]!.arg as unknown as SettleUpdate;
    const claims = realReserve.claims.map((c) => ({ ...c, amount: '400000' }));
    const forged = (over: Partial<ReserveUpdate>): ReserveUpdate => ({
      reservation: `tp-forged-${randomUUID()}`,
      toolId: SEND,
      claims,
      issuedAt: Date.now(),
      mac: 'AAAAAAAAAAAAAAAAAAAAAA',
      ...over,
    });
    const reserve = (m: unknown) => refusal(budget.executeUpdate(reserveBudgetUpdate, { args: [m as ReserveUpdate] }));

    // No MAC: refused before history.
    const { mac: _mac, ...unsigned } = forged({});
    expect(await reserve(unsigned)).toMatchObject({ reason: 'malformed' });
    // A MAC the worker did not make: the worker beside the budget workflow refuses it, nothing counted.
    expect(await reserve(forged({}))).toMatchObject({ reason: 'bad_proof' });
    // The real reserve's MAC over other amounts, or a new reservation id: not the worker's for them.
    const reclaimed = { ...realReserve, reservation: `tp-forged-${randomUUID()}` };
    expect(await reserve(reclaimed)).toMatchObject({ reason: 'bad_proof' });
    expect(await reserve({ ...realReserve, claims })).toMatchObject({ reason: 'already_reserved' });
    // The real reserve replayed from history: answered as recorded, never counted again; an old one is stale.
    expect(await reserve(realReserve)).toMatchObject({ reason: 'already_reserved' });
    expect(await reserve(forged({ issuedAt: Date.now() - 3 * 3_600_000 }))).toMatchObject({ reason: 'stale' });
    // A real settle's proof read from history, for its own reservation again or for another one.
    expect(
      await refusal(budget.executeUpdate(settleBudgetUpdate, { args: [{ ...realSettle, outcome: 'release' }] })),
    ).toMatchObject({ reason: 'bad_proof' });
    expect(await refusal(budget.executeUpdate(settleBudgetUpdate, { args: [{ ...realSettle }] }))).toMatchObject({
      reason: 'already_settled',
    });
    expect(
      await refusal(
        budget.executeUpdate(settleBudgetUpdate, {
          args: [{ ...realSettle, reservation: `tp-other-${randomUUID()}` }],
        }),
      ),
    ).toMatchObject({ reason: 'bad_proof' });

    const after = await budgetOf(h.client, victim);
    expect(landlord(after)).toEqual(landlord(before));
    expect(Object.keys(after.reservations).sort()).toEqual(Object.keys(before.reservations).sort());
    // The victim's next real payments: four more fit under the cap, and land.
    for (let i = 1; i <= 4; i++)
      expect(await payOnce(h, victim, 100000, `${subject}-${i}`)).toMatchObject({ outcome: 'ok' });
    expect(landlord(await budgetOf(h.client, victim))).toEqual({ spent: '500000', reserved: '0' });
    // What the forgeries left in history: only the two MACs the worker refused, as failed updates; no count.
    const reserves = accepted(await historyOf(h.client, budgetWorkflowId(victim)), 'reserveBudget');
    expect(reserves.filter((r) => String(r.arg.reservation).startsWith('tp-forged-'))).toHaveLength(2);
  });

  it('a budget workflow started by a starter with carried state is refused: it counts nothing', async () => {
    const victim = `agent:carried-${randomUUID()}`;
    const handle = await h.client.workflow.start('budgetCounter', {
      taskQueue: h.taskQueue,
      workflowId: budgetWorkflowId(victim),
      args: [
        {
          state: {
            windows: {},
            reservations: {},
          },
        },
      ],
    });
    await expect(handle.result()).rejects.toThrow();
    const subject = `carried-${randomUUID().slice(0, 8)}`;
    expect(await payOnce(h, victim, 100000, subject)).toMatchObject({ outcome: 'ok' });
    expect(landlord(await budgetOf(h.client, victim))).toEqual({ spent: '100000', reserved: '0' });
  });
});

describe("an operator's hand release: `toolplane budget release` with their own credential", () => {
  const dir = testDir('budget-release');
  // On-call may resolve the bank's in-doubt calls; finance may only approve or deny.
  const manifest: Manifest = {
    ...daily,
    approvers: [
      { tools: [SEND], groups: ['oncall'], subjects: [], decisions: ['resolve'], own_run: false },
      { tools: '*', groups: ['finance'], subjects: [], decisions: ['approve', 'deny'], own_run: false },
    ],
  };
  const key = randomBytes(32).toString('hex');
  const tickets = new TicketIssuer(Buffer.from(key, 'hex'));
  let h: Harness;
  let issuer: TestIssuer;
  beforeAll(async () => {
    await clearOfMidnight();
    issuer = await testIssuer();
    h = await harness(`budget-release-${randomUUID()}`);
    await h.runWorker({
      manifest,
      tools: bankingTools(dir),
      identity: issuer.identity,
      insecureAssertedPrincipals: false,
      ticketKey: key,
    });
  });
  afterAll(() => h?.close());

  /** A reservation held as an in-doubt call's is: the worker's own reserve (this suite holds its key). */
  async function held(principal: string, reservation: string): Promise<void> {
    const workflowId = budgetWorkflowId(principal);
    const claims = [
      {
        rule: 'spend' as const,
        counter: COUNTER,
        period: '1d',
        amount: '100000',
        limit: '500000',
        what: `EUR minor units paid to ${LANDLORD_IBAN.toLowerCase()}`,
      },
    ];
    const m = { reservation, toolId: SEND, run: `agent-${randomUUID()}`, claims, issuedAt: Date.now() };
    await h.client.workflow.executeUpdateWithStart(reserveBudgetUpdate, {
      updateId: reservation,
      args: [{ ...m, mac: tickets.budgetReserveMac(workflowId, m) }],
      startWorkflowOperation: new WithStartWorkflowOperation('budgetCounter', {
        workflowId,
        taskQueue: h.taskQueue,
        args: [{}],
        workflowIdConflictPolicy: 'USE_EXISTING',
      }),
    });
  }

  async function cli(...args: string[]): Promise<{ code: number; out: string[] }> {
    const out: string[] = [];
    const code = await main(
      ['node', 'toolplane', ...args, '--address', testAddress()],
      (l) => out.push(l),
      (l) => out.push(l),
    );
    return { code, out };
  }

  it("refuses no credential, a starter-side or non-operator one; takes on-call's once, and names who released", async () => {
    const principal = `agent:release-${randomUUID()}`;
    const [a, b] = [`tp-held-${randomUUID()}`, `tp-held-${randomUUID()}`];
    await held(principal, a);
    await held(principal, b);
    expect(landlord(await budgetOf(h.client, principal))).toEqual({ spent: '0', reserved: '200000' });

    const shown = await cli('budget', 'show', principal);
    expect(shown.code).toBe(0);
    expect(shown.out.join('\n')).toMatch(new RegExp(`${COUNTER}: 0 spent, 200000 reserved[\\s\\S]*held: 2`));

    const noCredential = await cli('budget', 'release', principal, a);
    expect(noCredential.code).toBe(2);
    // The agent's own principal, finance (approves, never resolves), a made-up token: refused, nothing released.
    for (const credential of [
      await issuer.approverCredential(principal, ['oncall']),
      await issuer.approverCredential('fin@corp.example', ['finance']),
      'eyJhbGciOiJub25lIn0.e30.',
    ]) {
      const r = await cli('budget', 'release', principal, a, '--credential', credential);
      expect(r.code).toBe(1);
      expect(r.out.join('\n')).toMatch(/refused to release/);
    }
    expect(landlord(await budgetOf(h.client, principal))).toEqual({ spent: '0', reserved: '200000' });

    const file = path.join(dir, 'oncall.jwt');
    fs.writeFileSync(file, await issuer.approverCredential('olu@corp.example', ['oncall']));
    const released = await cli(
      'budget',
      'release',
      principal,
      a,
      '--credential-file',
      file,
      '--reason',
      'bank says no',
    );
    expect(released).toEqual({ code: 0, out: [`${budgetWorkflowId(principal)}: ${a} released by olu@corp.example`] });
    // The same token again, on the other reservation: spent on the first release.
    const again = await cli('budget', 'release', principal, b, '--credential-file', file);
    expect(again.code).toBe(1);
    expect(again.out.join('\n')).toMatch(/already used/);
    const state = await budgetOf(h.client, principal);
    expect(landlord(state)).toEqual({ spent: '0', reserved: '100000' });
    expect(state.reservations[a]).toMatchObject({ status: 'released', releasedBy: 'olu@corp.example' });
    expect(state.reservations[b]).toMatchObject({ status: 'held' });
  });
});
