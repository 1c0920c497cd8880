// The principal the harness plays when a run asks them (`principal_confirms`, `requires_request`): a
// careful user vouches only for what their own task needs, a value or an action their task's calls
// hold, and turns down everything else. `none` plays a principal nobody asks: every question is a no.
import type { PendingEscalation } from '../../workflows/escalation';

export type DojoPrincipal = 'careful' | 'none';

export interface DojoCall {
  function: string;
  args: Record<string, unknown>;
}

/** The words a value is made of, as the user task's calls hold them (a list's elements one by one). */
function heldValues(calls: readonly DojoCall[]): Set<string> {
  const held = new Set<string>();
  const walk = (v: unknown): void => {
    if (v === null || v === undefined) return;
    if (Array.isArray(v)) v.forEach(walk);
    else if (typeof v === 'object') Object.values(v as Record<string, unknown>).forEach(walk);
    else held.add(String(v).trim().toLowerCase());
  };
  for (const c of calls) walk(c.args);
  return held;
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
 * The careful user's answer to one question: yes only when the value asked about is one their own
 * task's calls send (or, for an action, a call their task makes with these arguments), else no.
 */
export function carefulUserAnswer(question: PendingEscalation, userCalls: readonly DojoCall[]): 'confirm' | 'reject' {
  const value = question.field?.value;
  if (value === undefined) return 'reject';
  // An action (`requires_request`): yes only to a call their task makes, with these very arguments.
  if (question.field?.pointer === '')
    return userCalls.some(
      (c) => `tool://dojo/${c.function}` === String(value) && canonical(c.args) === canonical(question.args),
    )
      ? 'confirm'
      : 'reject';
  return heldValues(userCalls).has(String(value).trim().toLowerCase()) ? 'confirm' : 'reject';
}
