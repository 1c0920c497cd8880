// What a call carries beside its arguments, judged by the gate as data: the pipeline asks the worker
// (the resolveCarried activity) between the gate's two halves; here the answer is handed over directly.
import {
  governanceGate,
  isCarriedQuestion,
  judge,
  type CarriedQuestion,
  type CarriedResolution,
} from '../../workflows/gate/governance';
import { Budget } from '../../workflows/gate/limits';
import type { Provenance } from '../../workflows/gate/provenance';
import type { GateVerdict } from '../../workflows/gate/verdict';
import { ALLOW_ALL } from '../../catalog/policy';
import { ToolCall } from '../../catalog/tool-call';
import { ToolCatalog } from '../../catalog/tool-catalog';
import { gatedArgs } from '../../workflows/call/gate';
import { afterLookup, call, FILES, manifest, offerOf, ticket } from './support';

const fresh = () => ({ provenance: afterLookup(), budget: new Budget({}, 0) });
type Run = ReturnType<typeof fresh>;

function governed(run: { provenance: Provenance; budget: Budget }) {
  return {
    principal: 'agent:unit',
    ticket,
    offer: offerOf(FILES),
    budget: run.budget,
    provenance: run.provenance.snapshot(),
    onAllowed: () => {},
  };
}

/** The gate's question for a call it admitted on its arguments: what it carries. */
function question(run: Run, args: Record<string, unknown>): CarriedQuestion {
  const judged = judge(governed(run), call(FILES, args));
  if (!isCarriedQuestion(judged)) throw new Error(`decided without asking: ${JSON.stringify(judged)}`);
  return judged;
}

const judged = (run: Run, args: Record<string, unknown>, carried: CarriedResolution): GateVerdict =>
  question(run, args).answer(carried);

const toAda = { to: 'ada@example.com', attachments: ['f_1'] };
const internal = (bytes: number): CarriedResolution => ({
  content: { bytes, sources: ['file:f_1'], sensitivity: 'internal' },
});

describe('what a call carries, judged as data', () => {
  it('asks for what the call carries only once its arguments are admitted, with the arguments it would send', () => {
    const run = fresh();
    expect(question(run, toAda).carriedArgs).toEqual(toAda);
    // Nothing referenced: decided at once.
    expect(judge(governed(run), call(FILES, { to: 'ada@example.com', attachments: [] }))).toMatchObject({
      allow: true,
    });
    // Refused on its arguments: nothing is asked, the refusal is the argument's.
    expect(judge(governed(run), call(FILES, { to: 'mallory@evil.example', attachments: ['f_1'] }))).toMatchObject({
      allow: false,
      rule: 'protected_field:/to',
    });
  });

  it('counts the carried bytes toward the egress of each destination', () => {
    const run = fresh();
    const first = judged(run, toAda, internal(600));
    expect(first).toMatchObject({ allow: true, args: toAda });
    expect(first.leaving?.outbound.carriedBytes).toBe(600);
    first.charge!();
    expect(judged(run, toAda, internal(600))).toMatchObject({
      allow: false,
      rule: 'egress:ada@example.com',
      reason: expect.stringContaining('carried'),
    });
  });

  it('refuses content more sensitive than the sink accepts, naming where it came from', () => {
    const verdict = judged(fresh(), toAda, { content: { bytes: 10, sources: ['file:f_1'], sensitivity: 'secret' } });
    expect(verdict).toMatchObject({
      allow: false,
      rule: 'sensitivity:carried:/attachments',
      reason: expect.stringContaining('file:f_1'),
    });
  });

  it("refuses what could not be resolved, with the worker's reason (fail closed)", () => {
    const verdict = judged(fresh(), toAda, { unresolved: 'no file f_1' });
    expect(verdict).toMatchObject({ allow: false, rule: 'carried', reason: expect.stringMatching(/no file f_1$/) });
  });

  it('refuses a call that carries something when nothing was resolved for it (the gate called directly)', () => {
    const verdict = governanceGate(governed(fresh()))(call(FILES, toAda));
    expect(verdict).toMatchObject({ allow: false, rule: 'carried' });
  });
});

describe('a call a person may let through despite what it carries', () => {
  // The same tool, declared so that a person may overrule a violation (`approval: on_violation`).
  const decl = { ...manifest.tools.find((t) => t.id === FILES)!, approval: 'on_violation' as const };
  const askable = ToolCatalog.fromGranted([decl], []);
  const gateOf = (run: Run) => ({ ...governed(run), offer: askable.offered(ALLOW_ALL)[0] });
  const secret: CarriedResolution = { content: { bytes: 10, sources: ['file:f_1'], sensitivity: 'secret' } };

  it('sends, once a person approves, the trusted value of a protected field, not the look-alike the model wrote', () => {
    // The model retyped Ada's address in capitals: the gate matches it to the trusted value and would send that.
    const written = { to: 'ADA@example.com', attachments: ['f_1'] };
    const c = ToolCall.prepare(askable, FILES, written);
    const judged = judge(gateOf(fresh()), c);
    if (!isCarriedQuestion(judged)) throw new Error(`decided without asking: ${JSON.stringify(judged)}`);
    expect(judged.carriedArgs).toMatchObject({ to: 'ada@example.com' });
    // What it carries is more sensitive than the sink accepts: a violation a person may overrule.
    const verdict = judged.answer(secret);
    expect(verdict).toMatchObject({ allow: false, askPerson: true, rule: 'sensitivity:carried:/attachments' });
    // What the pipeline sends if the person approves: the trusted address, byte for byte.
    expect(gatedArgs(c, verdict)).toEqual({ to: 'ada@example.com', attachments: ['f_1'] });
    expect(verdict.substitutions).toEqual([{ pointer: '/to', written: 'ADA@example.com', sent: 'ada@example.com' }]);
  });
});
