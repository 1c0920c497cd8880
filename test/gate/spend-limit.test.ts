// Money per payee per run, without Temporal: the manifest's limit, a run's tighter one, exact sums.
import { chargeSpend, checkSpend, spendLimit, type SpentMinor } from '../../workflows/gate/spend-limit';
import { catalog, REFUND } from './support';

const refund = catalog.declared(REFUND)!.decl;
const pay = (payee: string, minor: bigint) => ({ payee, currency: 'EUR', minor });

describe('the spend limit', () => {
  it("takes the manifest's limit, or a run's lower one; a run cannot raise it or state it loosely", () => {
    expect(spendLimit(refund, 'EUR', undefined)).toBe(5000n);
    expect(spendLimit(refund, 'EUR', { EUR: 1000 })).toBe(1000n);
    expect(spendLimit(refund, 'EUR', { EUR: '999999' })).toBe(5000n);
    expect(spendLimit(refund, 'EUR', { EUR: '12.5' })).toBe(0n);
    expect(spendLimit(refund, 'USD', undefined)).toBeUndefined();
  });

  it('refuses a currency the manifest sets no limit for', () => {
    expect(checkSpend(refund, { payee: 'acct_ada', currency: 'USD', minor: 1n }, {}, undefined)).toMatchObject({
      ok: false,
      rule: 'spend',
    });
  });

  it('counts per payee, exactly, and refuses the payment that would pass the limit', () => {
    const spent: SpentMinor = {};
    chargeSpend(spent, pay('acct_ada', 4999n));
    expect(checkSpend(refund, pay('acct_ada', 1n), spent, undefined)).toEqual({ ok: true });
    expect(checkSpend(refund, pay('acct_ada', 2n), spent, undefined)).toMatchObject({ ok: false, rule: 'spend' });
    expect(checkSpend(refund, pay('acct_bob', 5000n), spent, undefined)).toEqual({ ok: true });
    chargeSpend(spent, pay('acct_ada', 1n));
    expect(spent).toEqual({ EUR: { acct_ada: '5000' } });
  });
});
