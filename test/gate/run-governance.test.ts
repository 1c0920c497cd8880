// A workflow's own calls, governed by default, judged without Temporal: the words it writes are its
// principal's, a protected field takes only what its declared source returned, and the labels and
// usage carry over to the run that continues it.
import { ALLOW_ALL } from '../../catalog/policy';
import { judgeCall } from '../../workflows/call/govern';
import { RunGovernance } from '../../workflows/gate/run-governance';
import type { GateVerdict } from '../../workflows/gate/verdict';
import { call, catalog, CRM, MAIL, REFUND, ticket } from './support';

const scope = { catalog, principal: 'agent:unit', ticket, policy: ALLOW_ALL };

function judge(
  governance: RunGovernance,
  toolId: string,
  args: Record<string, unknown>,
  acceptUntrusted?: { reason: string },
): GateVerdict {
  const judged = governance.governance(scope, { onAllowed: () => {}, ...(acceptUntrusted ? { acceptUntrusted } : {}) });
  const verdict = judgeCall(call(toolId, args), undefined, { own: judged });
  if (verdict === undefined || verdict instanceof Promise)
    throw new Error('a call that carries nothing is decided at once');
  return verdict;
}

const lookedUp = (governance: RunGovernance) =>
  governance.produced({
    toolId: CRM,
    output: { email: 'ada@example.com', account_id: 'acct_ada' },
    callTrusted: true,
    origins: [],
    sensitivity: 'internal',
  });

describe("the gate of a workflow's own calls", () => {
  it('refuses a refund to an account the workflow wrote itself, and allows the one the CRM returned', () => {
    const governance = RunGovernance.start({ given: { customer: 'ada@example.com' }, startedAt: 0 });
    expect(judge(governance, REFUND, { account_id: 'acct_ada', amount_cents: 100 })).toMatchObject({
      allow: false,
      rule: expect.stringContaining('/account_id'),
    });
    lookedUp(governance);
    expect(judge(governance, REFUND, { account_id: 'acct_ada', amount_cents: 100 }).allow).toBe(true);
  });

  it('takes an address the principal gave the run for a mail', () => {
    const governance = RunGovernance.start({ given: { customer: 'ada@example.com' }, startedAt: 0 });
    expect(judge(governance, MAIL, { to: 'ada@example.com', body: 'Your refund is on its way.' }).allow).toBe(true);
  });

  it("refuses acceptUntrusted where the manifest does not allow it on a workflow's request", () => {
    const governance = RunGovernance.start({ startedAt: 0 });
    expect(
      judge(governance, REFUND, { account_id: 'acct_ada', amount_cents: 100 }, { reason: 'the operator said so' }),
    ).toMatchObject({ allow: false, rule: 'accept_untrusted' });
  });

  it('carries its labels over to the run that continues it', () => {
    const first = RunGovernance.start({ startedAt: 0 });
    lookedUp(first);
    const next = RunGovernance.restore(JSON.parse(JSON.stringify(first.state())) as ReturnType<typeof first.state>);
    expect(judge(next, REFUND, { account_id: 'acct_ada', amount_cents: 100 }).allow).toBe(true);
  });
});
