// What a call carries beside its arguments, judged by the gate as data: the pipeline asks the worker
// (the resolveCarried activity) between the gate's two halves; here the answer is handed over directly.
import {
  admit,
  conclude,
  governanceGate,
  type Admitted,
  type CarriedResolution,
} from '../../workflows/gate/governance';
import { Budget } from '../../workflows/gate/limits';
import type { Provenance } from '../../workflows/gate/provenance';
import type { GateVerdict } from '../../workflows/gate/verdict';
import { afterLookup, call, FILES, offerOf, ticket } from './support';

const fresh = () => ({ provenance: afterLookup(), budget: new Budget({}, 0) });

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

/** The gate's first half, expected to admit the call. */
function admitted(run: { provenance: Provenance; budget: Budget }, args: Record<string, unknown>): Admitted {
  const a = admit(governed(run), call(FILES, args));
  if (!('admitted' in a)) throw new Error(`refused on its arguments: ${a.rule}: ${a.reason}`);
  return a;
}

function judged(
  run: { provenance: Provenance; budget: Budget },
  args: Record<string, unknown>,
  carried: CarriedResolution,
): GateVerdict {
  return conclude(governed(run), call(FILES, args), admitted(run, args), carried);
}

const toAda = { to: 'ada@example.com', attachments: ['f_1'] };
const internal = (bytes: number): CarriedResolution => ({
  content: { bytes, sources: ['file:f_1'], sensitivity: 'internal' },
});

describe('what a call carries, judged as data', () => {
  it('asks for what the call carries only once its arguments are admitted, with the arguments it would send', () => {
    const run = fresh();
    expect(admitted(run, toAda)).toMatchObject({ carries: true, args: toAda });
    expect(admitted(run, { to: 'ada@example.com', attachments: [] }).carries).toBe(false);
    // Refused on its arguments: nothing is resolved, the refusal is the argument's.
    expect(admit(governed(run), call(FILES, { to: 'mallory@evil.example', attachments: ['f_1'] }))).toMatchObject({
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
