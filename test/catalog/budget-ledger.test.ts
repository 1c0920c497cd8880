// The budget ledger and the manifest's budget declarations, without a server: claims, windows,
// reserve/settle, dedupe by reservation id, pruning, and bad declarations refused naming the field.
import { budgetClaims, windowName, windowOf, type BudgetClaim } from '../../catalog/budget';
import { ManifestInvalid } from '../../catalog/errors';
import type { ToolDeclInput } from '../../catalog/manifest';
import { ToolDecl } from '../../catalog/manifest';
import { parseManifest } from '../../runtime/manifest-file';
import { emptyBudgetState, prune, REMEMBER_MS, reserve, settle } from '../../workflows/budget/ledger';

const DAY = 86_400_000;
const NOON = Date.UTC(2026, 11, 1, 12);

const claim = (amount: number, limit = 500000): BudgetClaim => ({
  rule: 'spend',
  counter: 'spend/EUR/payee/de89',
  period: '1d',
  amount: String(amount),
  limit: String(limit),
  what: 'EUR minor units paid to de89',
});
const req = (id: string, amount: number) => ({
  reservation: id,
  toolId: 'tool://bank/send_money',
  claims: [claim(amount)],
});

describe('budget windows', () => {
  it('aligns a 1d window to the UTC day and a 1h window to the clock hour', () => {
    expect(windowOf('1d', NOON)).toEqual({ start: Date.UTC(2026, 11, 1), end: Date.UTC(2026, 11, 2) });
    expect(windowOf('1h', NOON + 1234)).toEqual({ start: NOON, end: NOON + 3_600_000 });
    expect(windowName('1d', Date.UTC(2026, 11, 1), Date.UTC(2026, 11, 2))).toBe(
      '1d 2026-12-01T00:00Z–2026-12-02T00:00Z',
    );
  });
});

describe('the budget ledger', () => {
  it('reserves until the cap, refuses past it naming the period and window, and never counts an id twice', () => {
    const s = emptyBudgetState();
    for (let i = 0; i < 5; i++) expect(reserve(s, req(`r${i}`, 100000), 'agent:a', NOON)).toEqual({ ok: true });
    const refused = reserve(s, req('r5', 100000), 'agent:a', NOON);
    expect(refused).toMatchObject({ ok: false, rule: 'spend' });
    expect(refused.ok ? '' : refused.reason).toMatch(
      /in the 1d 2026-12-01T00:00Z–2026-12-02T00:00Z window to 600000 \(0 spent, 500000 reserved\)/,
    );
    // The same id again (a retried activity) is answered, not counted.
    expect(reserve(s, req('r0', 100000), 'agent:a', NOON)).toEqual({ ok: true });
    expect(Object.values(s.windows)[0]!.counters['spend/EUR/payee/de89']).toEqual({ spent: '0', reserved: '500000' });
  });

  it('commit makes reserved spent, release gives it back, each once', () => {
    const s = emptyBudgetState();
    reserve(s, req('a', 300000), 'agent:a', NOON);
    reserve(s, req('b', 100000), 'agent:a', NOON);
    expect(settle(s, { reservation: 'a', outcome: 'commit' }, NOON)).toBe('committed');
    expect(settle(s, { reservation: 'a', outcome: 'commit' }, NOON)).toBe('committed');
    expect(settle(s, { reservation: 'b', outcome: 'release' }, NOON)).toBe('released');
    expect(settle(s, { reservation: 'b', outcome: 'commit' }, NOON)).toBe('released');
    expect(Object.values(s.windows)[0]!.counters['spend/EUR/payee/de89']).toEqual({ spent: '300000', reserved: '0' });
  });

  it('only the run that reserved settles its reservation; an operator naming no run may too', () => {
    const s = emptyBudgetState();
    reserve(s, { ...req('mine', 100000), run: 'run-a' }, 'agent:a', NOON);
    expect(settle(s, { reservation: 'mine', outcome: 'release', run: 'run-b' }, NOON)).toBe('held');
    expect(settle(s, { reservation: 'mine', outcome: 'release', run: 'run-a' }, NOON)).toBe('released');
    reserve(s, { ...req('stuck', 100000), run: 'run-a' }, 'agent:a', NOON);
    expect(settle(s, { reservation: 'stuck', outcome: 'commit' }, NOON)).toBe('committed');
  });

  it('a release that arrives before its reserve leaves a record, so the late reserve is not counted', () => {
    const s = emptyBudgetState();
    settle(s, { reservation: 'late', outcome: 'release' }, NOON);
    expect(reserve(s, req('late', 100000), 'agent:a', NOON)).toMatchObject({ ok: false });
    expect(Object.keys(s.windows)).toHaveLength(0);
  });

  it('counts two claims of one call on one counter together', () => {
    const s = emptyBudgetState();
    const twice = { reservation: 'x', toolId: 't', claims: [claim(300000), claim(300000)] };
    expect(reserve(s, twice, 'agent:a', NOON)).toMatchObject({ ok: false });
  });

  it('a new day is a new window; a held reservation keeps its window until settled; settled ids are forgotten later', () => {
    const s = emptyBudgetState();
    reserve(s, req('held', 500000), 'agent:a', NOON);
    reserve(s, req('done', 0), 'agent:a', NOON);
    settle(s, { reservation: 'done', outcome: 'commit' }, NOON);
    expect(reserve(s, req('tomorrow', 500000), 'agent:a', NOON + DAY)).toEqual({ ok: true });
    prune(s, NOON + 2 * DAY);
    expect(Object.keys(s.reservations).sort()).toEqual(['held', 'tomorrow']);
    expect(Object.keys(s.windows)).toHaveLength(2);
    settle(s, { reservation: 'held', outcome: 'release' }, NOON + 2 * DAY);
    settle(s, { reservation: 'tomorrow', outcome: 'release' }, NOON + 2 * DAY);
    prune(s, NOON + 2 * DAY + REMEMBER_MS);
    expect(s).toEqual(emptyBudgetState());
  });
});

describe('budget declarations', () => {
  const send: ToolDeclInput = {
    id: 'tool://bank/send_money',
    description: 'Send money.',
    input_schema: { type: 'object' },
    safety: 'mutating',
    recovery: 'reconcile',
    spend: {
      amount: '/amount_cents',
      currency: 'EUR',
      payee: '/recipient',
      max_minor_per_payee: { EUR: 500000 },
      budgets: [
        { period: '1d', per: 'payee', max_minor: { EUR: 500000 } },
        { period: '1h', per: 'principal', max_minor: { EUR: 900000 } },
      ],
    },
    egress: { destination: 'sepa', max_bytes_per_run: 4096, budgets: [{ period: '1d', max_bytes: 100000 }] },
  };

  it('claims per payee, per principal and per destination', () => {
    const decl = ToolDecl.parse(send);
    const out = budgetClaims(
      decl,
      { payee: 'de89', currency: 'EUR', minor: 1000n },
      { destinations: ['sepa'], bytes: 80 },
    );
    expect('claims' in out && out.claims.map((c) => [c.counter, c.period, c.amount, c.limit])).toEqual([
      ['spend/EUR/payee/de89', '1d', '1000', '500000'],
      ['spend/EUR/all', '1h', '1000', '900000'],
      ['egress/sepa', '1d', '80', '100000'],
    ]);
    expect(budgetClaims(decl, { payee: 'de89', currency: 'USD', minor: 1n }, undefined)).toMatchObject({
      rule: 'spend',
      reason: expect.stringMatching(/no 1d payee budget for USD/),
    });
  });

  it.each([
    ['7d', 'tools[0].spend.budgets[0].period'],
    ['7m', 'tools[0].spend.budgets[0].period'],
    ['1 day', 'tools[0].spend.budgets[0].period'],
  ])('refuses the period %s naming %s', (period, at) => {
    const manifest = {
      version: 1,
      servers: { bank: { kind: 'in_process' } },
      tools: [{ ...send, spend: { ...send.spend!, budgets: [{ period, per: 'payee', max_minor: { EUR: 1 } }] } }],
    };
    let err: unknown;
    try {
      parseManifest(JSON.stringify(manifest), 'm.json');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ManifestInvalid);
    expect((err as ManifestInvalid).data!.problems.map((p) => p.path)).toContain(at);
  });

  it('refuses a budget per anything else, or without a limit', () => {
    const bad = (budget: unknown) => {
      const manifest = {
        version: 1,
        servers: { bank: { kind: 'in_process' } },
        tools: [{ ...send, spend: { ...send.spend!, budgets: [budget] } }],
      };
      try {
        parseManifest(JSON.stringify(manifest), 'm.json');
      } catch (e) {
        return (e as ManifestInvalid).data!.problems.map((p) => p.path);
      }
      return [];
    };
    expect(bad({ period: '1d', per: 'tool', max_minor: { EUR: 1 } })).toContain('tools[0].spend.budgets[0].per');
    expect(bad({ period: '1d', per: 'payee', max_minor: {} })).toContain('tools[0].spend.budgets[0].max_minor');
  });
});
