// Workflow-safe, step 2 of a call: the gate judges it once. The manifest's rules are judged by
// workflows/gate/ in one pass, arguments first, then what leaves; what the call carries beside its
// arguments is the one thing asked of the worker, here, between the two, and handed over as data.
// A workflow's own gate speaks first on its own calls; on an ungoverned run it is the only gate.
import type { ToolCall } from '../../catalog/tool-call';
import { admit, conclude, governedBy, type GovernedCall } from '../gate/governance';
import { ownVerdictFirst, refuseAcceptUntrusted, withOwn, type Governance } from '../gate/own-call';
import type { Gate, GateVerdict } from '../gate/verdict';
import { carriedBy } from './carried';

type Decided = GateVerdict | undefined | Promise<GateVerdict | undefined>;

const isPromise = <T>(v: T | Promise<T>): v is Promise<T> => typeof (v as { then?: unknown })?.then === 'function';

/** The manifest's verdict: at once, unless the call carries something the worker must resolve first. */
function judgeManifest(g: GovernedCall, call: ToolCall): GateVerdict | Promise<GateVerdict> {
  const admitted = admit(g, call);
  if (!('admitted' in admitted)) return admitted;
  if (!admitted.carries) return conclude(g, call, admitted);
  return carriedBy(call, admitted.args, g).then((carried) => conclude(g, call, admitted, carried));
}

/** A workflow's own call: its gate's verdict, then the manifest's, merged. */
function judgeOwn(call: ToolCall, governance: Governance, mine: GateVerdict | undefined): Decided {
  const first = ownVerdictFirst(call, mine);
  if (first) return first;
  const verdict = judgeManifest(governance.governed(call, mine?.askPerson === true), call);
  const merge = (m: GateVerdict) => withOwn(m, mine, governance.acceptUntrusted);
  return isPromise(verdict) ? verdict.then(merge) : merge(verdict);
}

/**
 * The call's verdict (undefined: no gate). The manifest's gate as agentRun and the AI SDK tools pass
 * it (`governanceGate`), a workflow's own call under `governance`, or the workflow's gate alone.
 */
export function judgeCall(call: ToolCall, gate: Gate | undefined, governance: Governance | undefined): Decided {
  const manifest = governedBy(gate);
  if (manifest) return judgeManifest(manifest, call);
  if (!governance) return gate?.(call);
  const refused = refuseAcceptUntrusted(call, governance.acceptUntrusted);
  if (refused) return refused;
  const mine = gate?.(call);
  if (mine !== undefined && isPromise(mine)) return mine.then((m) => judgeOwn(call, governance, m));
  return judgeOwn(call, governance, mine);
}
