// The manifest's gate, judged without Temporal: what it lets through, what it refuses and why, and
// what it charges, for calls prepared against a catalog built from a manifest.
import { canonicalJson } from '../../catalog/digest';
import { effectKey } from '../../common/effect-key';
import { governanceGate } from '../../workflows/gate/governance';
import { Budget } from '../../workflows/gate/limits';
import type { Provenance } from '../../workflows/gate/provenance';
import type { GateVerdict } from '../../workflows/gate/verdict';
import { ALLOW_ALL } from '../../catalog/policy';
import { ToolCall } from '../../catalog/tool-call';
import { ToolCatalog } from '../../catalog/tool-catalog';
import { gatedArgs } from '../../workflows/call/gate';
import { afterLookup, call, CRM, MAIL, manifest, offerOf, REFUND, ticket } from './support';

/** The manifest's gate over a run's labels and budget, deciding one call at once (none here carries anything). */
function judge(
  toolId: string,
  args: Record<string, unknown>,
  run: { provenance: Provenance; budget: Budget },
): GateVerdict {
  const verdict = governanceGate({
    principal: 'agent:unit',
    ticket,
    offer: offerOf(toolId),
    budget: run.budget,
    provenance: run.provenance.snapshot(),
    onAllowed: () => {},
  })(call(toolId, args));
  if (verdict instanceof Promise) throw new Error('a call that carries nothing is decided at once');
  return verdict;
}

const fresh = () => ({ provenance: afterLookup(), budget: new Budget({}, 0) });

describe('the data-flow gate', () => {
  it('lets a refund to the account the CRM returned through, its arguments as written', () => {
    const verdict = judge(REFUND, { account_id: 'acct_ada', amount_cents: 2000, memo: 'outage' }, fresh());
    expect(verdict.allow).toBe(true);
    expect(verdict.allow && verdict.args).toEqual({ account_id: 'acct_ada', amount_cents: 2000, memo: 'outage' });
  });

  it('hands the effect key the canonical JSON of the arguments it sends (the trusted value in place), written once', () => {
    const verdict = judge(REFUND, { account_id: 'ACCT_ADA', amount_cents: 2000, memo: 'outage' }, fresh());
    const sent = { account_id: 'acct_ada', amount_cents: 2000, memo: 'outage' };
    expect(verdict.allow && verdict.args).toEqual(sent);
    expect(verdict.written?.of).toBe(verdict.allow && verdict.args);
    expect(verdict.written?.json).toBe(canonicalJson(sent));
    const args = verdict.allow ? verdict.args : undefined;
    expect(effectKey({ tool: REFUND, args }, 3, verdict.written)).toBe(effectKey({ tool: REFUND, args: sent }, 3));
  });

  it('refuses a refund to an account no CRM result named, by the protected field', () => {
    const verdict = judge(REFUND, { account_id: 'acct_mallory', amount_cents: 2000 }, fresh());
    expect(verdict).toMatchObject({ allow: false, rule: expect.stringContaining('/account_id') });
  });

  it('refuses a tool the run is not offered, before any other rule', () => {
    const run = fresh();
    const verdict = governanceGate({
      principal: 'agent:unit',
      ticket,
      offer: undefined,
      budget: run.budget,
      provenance: run.provenance.snapshot(),
      onAllowed: () => {},
    })(call(REFUND, { account_id: 'acct_ada', amount_cents: 1 }));
    expect(verdict).toMatchObject({ allow: false, rule: 'unreachable' });
  });

  it('refuses a field the model wrote after reading untrusted data, where no rule admits it', () => {
    const verdict = judge(REFUND, { account_id: 'acct_ada', amount_cents: 4321 }, fresh());
    expect(verdict).toMatchObject({ allow: false, rule: 'taint:/amount_cents' });
  });

  it('keeps confidential data from a tool that may send only internal data', () => {
    const run = { provenance: afterLookup('confidential'), budget: new Budget({}, 0) };
    const verdict = judge(MAIL, { to: 'ada@example.com', body: 'Call her at +44 20 7946 0000' }, run);
    expect(verdict).toMatchObject({ allow: false, rule: 'sensitivity:/body' });
  });

  it('takes an address the principal named for a mail, from the prompt', () => {
    const verdict = judge(MAIL, { to: 'ada@example.com', body: 'Your refund is on its way.' }, fresh());
    expect(verdict.allow).toBe(true);
  });

  it("charges the payee's spend only when the call goes ahead, and refuses what passes the limit", () => {
    const run = fresh();
    const first = judge(REFUND, { account_id: 'acct_ada', amount_cents: 3000 }, run);
    expect(first.allow).toBe(true);
    // Not charged yet but held: a second call beside it cannot pass the limit either.
    expect(judge(REFUND, { account_id: 'acct_ada', amount_cents: 3000 }, run)).toMatchObject({
      allow: false,
      rule: 'spend',
    });
    first.charge!();
    expect(run.budget.usage.spentMinor).toEqual({ EUR: { acct_ada: '3000' } });
    const within = judge(REFUND, { account_id: 'acct_ada', amount_cents: 2000 }, run);
    expect(within.allow).toBe(true);
    within.release!();
    expect(run.budget.usage.spentMinor).toEqual({ EUR: { acct_ada: '3000' } });
  });

  it("refuses a mail past the run's egress bytes to its destination", () => {
    const run = fresh();
    const body = 'x'.repeat(300);
    const first = judge(MAIL, { to: 'ada@example.com', body }, run);
    expect(first.allow).toBe(true);
    first.charge!();
    expect(judge(MAIL, { to: 'ada@example.com', body }, run)).toMatchObject({
      allow: false,
      rule: expect.stringContaining('egress'),
    });
  });

  it('reads the CRM itself as a call that sends nothing protected', () => {
    expect(judge(CRM, { email: 'ada@example.com' }, fresh()).allow).toBe(true);
  });
});

describe('a call a person may let through despite a data-flow violation', () => {
  // The refund, declared so that a person may overrule a violation (`approval: on_violation`).
  const decl = { ...manifest.tools.find((t) => t.id === REFUND)!, approval: 'on_violation' as const };
  const askable = ToolCatalog.fromGranted([decl], []);

  it('sends, once a person approves, the trusted value of every protected field the model retyped', () => {
    // The account retyped in capitals (a look-alike of the CRM's), an amount the model made up (untrusted).
    const c = ToolCall.prepare(askable, REFUND, { account_id: 'ACCT_ADA', amount_cents: 1234 });
    const verdict = governanceGate({
      principal: 'agent:unit',
      ticket,
      offer: askable.offered(ALLOW_ALL)[0],
      budget: new Budget({}, 0),
      provenance: afterLookup().snapshot(),
      onAllowed: () => {},
    })(c) as GateVerdict;
    expect(verdict).toMatchObject({ allow: false, askPerson: true, rule: 'taint:/amount_cents' });
    // What goes out if the person approves: the CRM's account, byte for byte, as an allowed call would send.
    expect(gatedArgs(c, verdict)).toEqual({ account_id: 'acct_ada', amount_cents: 1234 });
    expect(verdict.substitutions).toEqual([{ pointer: '/account_id', written: 'ACCT_ADA', sent: 'acct_ada' }]);
  });
});
