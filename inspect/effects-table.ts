// The table `toolplane show` prints: one line per effect of a run, from its journal view.
import type { EffectView } from './journal';

/** `tool failed 2, worker lost 3`: what the sends of a call that were not its answer came to. */
function sendsSaid(v: EffectView): string {
  const said: string[] = [];
  if (v.toolFailures) said.push(`tool failed ${v.toolFailures}`);
  if (v.lostSends) said.push(`worker lost ${v.lostSends}`);
  return said.join(', ');
}

/** A call a reset run sent after its reset point, as the operator reads it. */
function afterReset(r: NonNullable<EffectView['afterReset']>): string {
  return r.base === 'not made'
    ? `a new effect: run ${r.baseRunId}, reset from, never made this call (other arguments, or not reached)`
    : `sent after the reset: run ${r.baseRunId}, reset from, recorded no outcome for it`;
}

export function formatEffects(effects: EffectView[]): string[] {
  const rows = effects.map((v) => [
    `#${v.position}`,
    v.toolId,
    v.effectKey ? `${v.effectKey.slice(0, 14)}…` : '-',
    String(v.attempts),
    v.recovery +
      (v.retries ? ` [Temporal retries: ${v.retries}]` : '') +
      (v.toolFailures || v.lostSends ? ` [${sendsSaid(v)}]` : '') +
      (v.reconciles.length ? ` [reconcile: ${v.reconciles.map((r) => r.answer ?? '?').join(', ')}]` : '') +
      (v.personDecisions.length ? ` [person: ${v.personDecisions.join(', ')}]` : '') +
      (v.adoptedFrom ? ` [adopted from run ${v.adoptedFrom.runId} event ${v.adoptedFrom.eventId}]` : '') +
      (v.afterReset ? ` [${afterReset(v.afterReset)}]` : ''),
    v.outcome,
    [v.decision, v.rule, v.reason].filter(Boolean).join(' · '),
  ]);
  const header = ['pos', 'tool', 'effect key', 'attempts', 'recovery', 'outcome', 'decision'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ');
  return [line(header), ...rows.map(line)];
}
