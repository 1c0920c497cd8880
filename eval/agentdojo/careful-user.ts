// The careful user of the AgentDojo harness: asked to vouch for one exact value (`principal_confirms`),
// they say yes only to a value their own task needs, which the benchmark states as the user task's
// ground-truth calls. A value only the injection task's calls carry (an attacker's IBAN, address or
// file) is not theirs: they say no. Every path (agentRun, own workflow, gateway) asks this one function.

/** What the principal is asked: the argument (a JSON pointer) and the exact value the call waits on. */
export interface ConfirmationAsk {
  pointer?: string;
  value: string | number;
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
  return String(v) === value;
}

/**
 * `confirm` when the asked value appears in an argument of the user task's own ground-truth calls
 * (pass `script.calls.slice(0, script.userCalls)`): equal to it as a string, or, for a non-empty
 * string, inside that argument's JSON text (an address inside a list of recipients, an IBAN inside a
 * memo the user dictated); else `reject`. A number is matched only as a whole value, so 50 does not
 * vouch for 500.
 */
export function carefulUserAnswer(question: ConfirmationAsk, userCalls: GroundTruthCall[]): 'confirm' | 'reject' {
  const value = String(question.value);
  const inside = typeof question.value === 'string' && value.length > 0 ? JSON.stringify(value).slice(1, -1) : '';
  for (const call of userCalls)
    for (const arg of Object.values(call.args)) {
      if (holdsScalar(arg, value)) return 'confirm';
      if (inside && JSON.stringify(arg ?? null).includes(inside)) return 'confirm';
    }
  return 'reject';
}
