// Workflow-safe, step 2 of a call: the gate judges it once. The manifest's rules are judged by
// workflows/gate/ in one pass, arguments first, then what leaves; what the call carries beside its
// arguments is the one thing asked of the worker, here, between the two, and handed over as data.
// A workflow's own gate speaks first on its own calls; on an ungoverned run it is the only gate.
import { patched } from '@temporalio/workflow';
import type { ToolCall } from '../../catalog/tool-call';
import { Patch } from '../../common/names';
import { isCarriedQuestion, judge, type GovernedCall } from '../gate/governance';
import { ownVerdictFirst, refuseAcceptUntrusted, withOwn, type Governance } from '../gate/own-call';
import type { Gate, GateVerdict } from '../gate/verdict';
import { carriedBy } from './carried';

type Decided = GateVerdict | undefined | Promise<GateVerdict | undefined>;

const isPromise = <T>(v: T | Promise<T>): v is Promise<T> => typeof (v as { then?: unknown })?.then === 'function';

/** The manifest's verdict: at once, unless the call carries something the worker must resolve first. */
function judgeManifest(g: GovernedCall, call: ToolCall): GateVerdict | Promise<GateVerdict> {
  const judged = judge(g, call);
  if (!isCarriedQuestion(judged)) return judged;
  return carriedBy(call, judged.carriedArgs, g).then((carried) => judged.answer(carried));
}

/** A workflow's own call: its gate's verdict, then the manifest's, merged. */
function judgeOwn(call: ToolCall, governance: Governance, mine: GateVerdict | undefined): Decided {
  // A run that reached such a call before the manifest judged it replays as it ran: the person alone decided.
  if (mine?.allow === false && mine.askPerson && !patched(Patch.OwnQuestionJudgedByManifest)) return mine;
  const first = ownVerdictFirst(call, mine);
  if (first) return first;
  const verdict = judgeManifest(governance.governed(call, mine?.askPerson === true), call);
  const merge = (m: GateVerdict) => withOwn(m, mine, governance.acceptUntrusted);
  return isPromise(verdict) ? verdict.then(merge) : merge(verdict);
}

/**
 * Who judges a call: the manifest over the labels its model read (agentRun, the AI SDK tools: the
 * `governanceGate` they pass), or over the run's own labels after the workflow's own gate (`own`).
 */
export type Judges = { manifest: GovernedCall } | { own: Governance };

/** The call's verdict (undefined: no gate): the manifest's, or the workflow's own gate alone on an ungoverned run. */
export function judgeCall(call: ToolCall, gate: Gate | undefined, judges: Judges | undefined): Decided {
  if (judges && 'manifest' in judges) return judgeManifest(judges.manifest, call);
  if (!judges) return gate?.(call);
  const governance = judges.own;
  const refused = refuseAcceptUntrusted(call, governance.acceptUntrusted);
  if (refused) return refused;
  const mine = gate?.(call);
  if (mine !== undefined && isPromise(mine)) return mine.then((m) => judgeOwn(call, governance, m));
  return judgeOwn(call, governance, mine);
}
