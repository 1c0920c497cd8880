// The careful user of the AgentDojo harness, the principal every path (agentRun, a team's own workflow,
// the gateway) asks when a run asks its principal: they say yes only to what their own task needs,
// which the benchmark states as the user task's ground-truth calls. A value or an action only the
// injection task's calls carry (an attacker's IBAN, address or link) is not theirs: they say no.
// `none` plays a principal nobody asks: every question is a no.

import { dojoToolId } from './tool-id';

export type DojoPrincipal = 'careful' | 'none';

/**
 * What the host knows of the principal's request: `open` tells the plane nothing beyond the prompt (every
 * action a `requires_request` tool takes is asked about); `narrows` is a host that knows which actions
 * the user asked for (a button, a form, a planner reading only the user's words) and names their tools:
 * `grants` on agentRun and a workflow of one's own, the declared request's `tools` on the gateway.
 */
export type DojoHost = 'open' | 'narrows';

/** What the principal is asked: the argument (a JSON pointer; `''` for the action itself) and its exact value. */
export interface ConfirmationAsk {
  pointer?: string;
  value: string | number;
  /** For an action (`requires_request`): the arguments the call would send. */
  args?: unknown;
}

/** One ground-truth call, as the dojo daemon scripts it. */
export interface GroundTruthCall {
  function: string;
  args: Record<string, unknown>;
}

/** Does `value` equal one of the scalars in `v`, at any depth (String-compared: 100 and "100" agree)? */
function holdsScalar(v: unknown, value: string): boolean {
  if (v === null || v === undefined) return false;
  if (Array.isArray(v)) return v.some((x) => holdsScalar(x, value));
  if (typeof v === 'object') return Object.values(v).some((x) => holdsScalar(x, value));
  return String(v).trim().toLowerCase() === value;
}

/** JSON with sorted keys and folded case: two writings of one call compare equal. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v !== null && typeof v === 'object')
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(typeof v === 'string' ? v.trim().toLowerCase() : v);
}

/**
 * `confirm` when the asked value is a whole value of an argument of the user task's own ground-truth
 * calls (pass `script.calls.slice(0, script.userCalls)`), an element of a list included: never a
 * piece of a longer one, since AgentDojo's user tasks carry injected text inside their own arguments
 * (a channel named by the attacker), and 50 does not vouch for 500. An action is confirmed only for a
 * call the task makes with these very arguments. Else `reject`.
 */
export function carefulUserAnswer(
  question: ConfirmationAsk,
  userCalls: readonly GroundTruthCall[],
): 'confirm' | 'reject' {
  if (question.pointer === '')
    return userCalls.some(
      (c) => dojoToolId(c.function) === String(question.value) && canonical(c.args) === canonical(question.args),
    )
      ? 'confirm'
      : 'reject';
  const value = String(question.value).trim().toLowerCase();
  if (value === '') return 'reject';
  for (const call of userCalls)
    for (const arg of Object.values(call.args)) if (holdsScalar(arg, value)) return 'confirm';
  return 'reject';
}
