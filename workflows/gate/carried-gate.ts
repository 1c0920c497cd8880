// Workflow-safe: content a call carries beside its arguments is gated like an argument. It is
// outside-world data (untrusted), admitted into a mutating tool only by a field rule covering the
// argument that references it, and no more sensitive than the tool accepts unless redacted.
import { getAt, pointerCovers, setAt } from '../../catalog/json-pointer';
import type { ToolDecl } from '../../catalog/manifest';
import { sensitivityRank } from '../../catalog/sensitivity';
import type { CarriedContent } from '../../common/wire';

export type CarriedVerdict =
  | { allow: true; args: Record<string, unknown>; carriedBytes: number; redacted?: string }
  | { allow: false; rule: string; reason: string };

/** Whether the arguments reference anything to carry (an absent or empty reference carries nothing). */
export function referencesCarried(decl: ToolDecl, args: unknown): boolean {
  if (!decl.carried) return false;
  const ref = getAt(args, decl.carried.pointer);
  if (ref === undefined || ref === null || ref === '') return false;
  return !(Array.isArray(ref) && ref.length === 0);
}

const covers = pointerCovers;

export function checkCarried(decl: ToolDecl, args: Record<string, unknown>, content: CarriedContent): CarriedVerdict {
  const carried = decl.carried!;
  const at = `carried:${carried.pointer}`;
  const from = (content.sources ?? []).join(', ') || decl.id;
  if (decl.safety !== 'read_only' && !decl.protected_fields.some((r) => covers(r.pointer, carried.pointer))) {
    return {
      allow: false,
      rule: `taint:${at}`,
      reason: `what ${carried.pointer} carries (from ${from}) is untrusted and no field rule admits it into a ${decl.safety} tool`,
    };
  }
  if (sensitivityRank(content.sensitivity) <= sensitivityRank(decl.sensitivity.max))
    return { allow: true, args, carriedBytes: content.bytes };
  const redaction = carried.redaction;
  if (redaction && sensitivityRank(redaction.lowers_to) <= sensitivityRank(decl.sensitivity.max)) {
    // The reference is replaced, so nothing it named is carried; redaction never raises trust.
    return { allow: true, args: setAt(args, carried.pointer, redaction.replace_with), carriedBytes: 0, redacted: at };
  }
  return {
    allow: false,
    rule: `sensitivity:${at}`,
    reason: `${carried.pointer} carries ${content.sensitivity} content beside the arguments (from ${from}); ${decl.id} accepts at most ${decl.sensitivity.max}`,
  };
}
