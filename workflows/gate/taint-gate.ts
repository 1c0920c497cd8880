// Workflow-safe: what data may flow into which tool. Decided before the call is scheduled,
// identically on replay. Anything unexpected refuses (fail closed).
import { pointerCovers, setAt } from '../../catalog/json-pointer';
import type { ProtectedFieldDecl, ToolDecl } from '../../catalog/manifest';
import { sensitivityRank } from '../../catalog/sensitivity';
import { leaves, type Leaf } from '../../common/json-leaves';
import { sourcesOf, type FieldSources, type SourcesRule } from './field-sources';
import { USER_PROMPT, type Label, type ProvenanceView } from './provenance';
import type { ConfirmAsk } from './verdict';

/** A look-alike the model wrote, replaced by the exact value the trusted source produced. */
export interface Substitution {
  pointer: string;
  written: string;
  sent: string;
}

export type FlowVerdict =
  | {
      allow: true;
      args: Record<string, unknown>;
      redacted: string[];
      /** Every argument as written was trusted: what `ProvenanceView.callTrusted(args)` says, from the labels read here. */
      trustedArgs: boolean;
      substitutions?: Substitution[];
      /** The scalars of the arguments as written, read once: those of `args` too when nothing replaced them. */
      leaves: readonly Leaf[];
    }
  | {
      allow: false;
      rule: string;
      reason: string;
      /**
       * For a tool a person may overrule (`whole`): the arguments as the rest of the check gated them
       * (trusted values of the other protected fields, redactions), what goes out if the person does.
       */
      args?: Record<string, unknown>;
      substitutions?: Substitution[];
      /** The run's principal may lift the refusal by confirming this value. */
      confirm?: ConfirmAsk;
    };

type Refused = { allow: false; rule: string; reason: string; confirm?: ConfirmAsk };

const covers = pointerCovers;

/**
 * The value to send (the trusted source's exact token, or the value as written), or why the field is
 * refused: `unknown` when no result of the run holds the value at all (the model or the client wrote it),
 * `confirmable` when the rule lets the run's principal vouch for it instead.
 */
type FieldCheck = string | number | { reason: string; unknown?: boolean; confirmable?: boolean };

/**
 * "The recipient must come from the CRM": satisfied strictly by provenance. Matching after
 * normalisation decides where the value came from; what is sent is the trusted source's own bytes.
 * A span of the principal's own words counts where the rule admits `user://prompt`.
 */
function checkProtectedField(
  rule: SourcesRule,
  pointer: string,
  value: string | number,
  prov: ProvenanceView,
): FieldCheck {
  const sources = sourcesOf(rule);
  const traced = traceProtectedField(sources, pointer, value, prov);
  if (typeof traced !== 'object' || !sources.userPrompt) return traced;
  if (typeof value === 'string' && prov.userSpan(value)) return value;
  // The principal's yes made it their words (the rule admits them); else they may be asked, as declared.
  if (prov.confirmed(value)) return value;
  const asks = 'principal_confirms' in rule ? rule.principal_confirms : undefined;
  if (asks === 'any' || (asks === 'unknown' && traced.unknown)) traced.confirmable = true;
  return traced;
}

/** No result of the run holds the value: the model (or an MCP client) wrote it. */
function unwritten(pointer: string, allowed: readonly string[]): FieldCheck {
  return { reason: `${pointer} was written by the model, not produced by ${allowed.join(' or ')}`, unknown: true };
}

function traceProtectedField(
  { names: allowed, placeTools }: FieldSources,
  pointer: string,
  value: string | number,
  prov: ProvenanceView,
): FieldCheck {
  const prods = prov.productionsOf(value);
  if (prods.length === 0) return unwritten(pointer, allowed);
  // One pass over the sightings (the gate's hot path), counting; the lists a refusal names are made
  // only for it. Only an allowed source whose call nobody steered (or the user's own words) vouches
  // for a value. Another untrusted source offering the same value may be what made the model pick
  // it, unless the user wrote it or that source only echoed what the run itself sent it (a receipt).
  // A tool the rule names a place of is not another source: its other sightings are the same result.
  let fromAllowed = 0;
  let vouching = 0;
  let userWrote = false;
  let anyForeign = false;
  let inPlaceTool = false;
  /** A vouching sighting wrote the value as it stands. */
  let asWritten = false;
  /** The one exact token the vouching sightings wrote, or undefined once they wrote two. */
  let onlyExact: string | undefined;
  for (const p of prods) {
    if (allowed.includes(p.source)) {
      fromAllowed++;
      if (p.trusted || p.callTrusted) {
        if (vouching++ === 0) onlyExact = p.exact;
        else if (onlyExact !== p.exact) onlyExact = undefined;
        if (p.exact === value) asWritten = true;
        if (p.trusted) userWrote = true;
      }
    } else if (placeTools.size > 0 && placeTools.has(p.source)) inPlaceTool = true;
    else if (!p.trusted && !p.echo) anyForeign = true;
  }
  if (anyForeign && !userWrote) {
    const foreign = [
      ...new Set(
        prods
          .filter((p) => !p.trusted && !p.echo && !allowed.includes(p.source) && !placeTools.has(p.source))
          .map((p) => p.source),
      ),
    ];
    return {
      reason: `${pointer} also came from ${foreign.join(', ')}, which the rule does not allow (allowed: ${allowed.join(', ')})`,
    };
  }
  if (fromAllowed === 0)
    return {
      reason: inPlaceTool
        ? `${pointer} appears in a result of ${[...placeTools].join(', ')}, but not as a whole value at ${allowed.join(' or ')}`
        : `${pointer} was not produced by ${allowed.join(' or ')}`,
    };
  if (vouching === 0)
    return {
      reason: `${pointer} came from ${[...new Set(prods.filter((p) => allowed.includes(p.source)).map((p) => p.source))].join(', ')}, but that call was steered by untrusted input`,
    };
  if (typeof value === 'number' || asWritten) return value;
  if (onlyExact !== undefined) return onlyExact;
  const vouchers = prods.filter((p) => allowed.includes(p.source) && (p.trusted || p.callTrusted));
  const exacts = [...new Set(vouchers.map((p) => p.exact))];
  return {
    reason: `${pointer} matches ${exacts.length} different values from ${[...new Set(vouchers.map((p) => p.source))].join(', ')} (${exacts.map((e) => JSON.stringify(e)).join(', ')}); refusing rather than picking one`,
  };
}

function ruleCovering(rules: readonly ProtectedFieldDecl[], pointer: string): ProtectedFieldDecl | undefined {
  for (const r of rules) if (covers(r.pointer, pointer)) return r;
  return undefined;
}

/** The arguments with their protected fields' trusted values, what was replaced, and the first field refused. */
interface Protected {
  refused: Refused | undefined;
  /** The first field the principal may confirm: the call's refusal only where nothing else refuses it. */
  confirmable: Refused | undefined;
  out: Record<string, unknown>;
  /** Made at the first replacement (most calls replace nothing). */
  substitutions: Substitution[] | undefined;
}

/**
 * The arguments as their protected fields' trusted values (byte for byte) and what was replaced, or
 * the first field refused: at once, or (`whole`) once every other field is replaced.
 */
function protectFields(
  rules: readonly ProtectedFieldDecl[],
  argLeaves: readonly Leaf[],
  args: Record<string, unknown>,
  prov: ProvenanceView,
  whole: boolean,
): Protected {
  const p: Protected = { refused: undefined, confirmable: undefined, out: args, substitutions: undefined };
  for (const rule of rules) {
    if (!('from_sources' in rule)) continue;
    for (const leaf of argLeaves) {
      if (!covers(rule.pointer, leaf.pointer)) continue;
      const field: FieldCheck =
        leaf.value === null || typeof leaf.value === 'boolean'
          ? { reason: `${leaf.pointer} is not a value any source produced` }
          : checkProtectedField(rule, leaf.pointer, leaf.value, prov);
      if (typeof field === 'object') {
        const refused: Refused = { allow: false, rule: `protected_field:${rule.pointer}`, reason: field.reason };
        if (field.confirmable && !whole) {
          p.confirmable ??= {
            ...refused,
            confirm: confirmAsk(leaf.pointer, leaf.value as string | number, field.reason, prov),
          };
          continue;
        }
        p.refused ??= refused;
        if (!whole) return p;
        continue;
      }
      if (field !== leaf.value) {
        p.out = setAt(p.out, leaf.pointer, field);
        (p.substitutions ??= []).push({ pointer: leaf.pointer, written: String(leaf.value), sent: String(field) });
      }
    }
  }
  return p;
}

/** The question a confirmable field puts to the principal; their yes records the value as their words. */
function confirmAsk(pointer: string, value: string | number, origin: string, prov: ProvenanceView): ConfirmAsk {
  return { pointer, value, origin, accept: () => prov.confirm(value) };
}

/** A value's label, where the principal's own words inside their sentence ("ship to 1234 Elm Street, New York") are theirs. */
function labelOf(prov: ProvenanceView, value: Leaf['value']): Label {
  const label = prov.labelOf(value);
  if (label.trusted || value === null || typeof value === 'boolean') return label;
  if (!prov.confirmed(value) && (typeof value !== 'string' || !prov.userSpan(value))) return label;
  return { sources: [USER_PROMPT], trusted: true, sensitivity: label.sensitivity, synthesized: false };
}

/** A mutating tool takes untrusted data only where a field rule admits it (labels are read into `labels`). */
function refuseTainted(
  decl: ToolDecl,
  argLeaves: readonly Leaf[],
  labels: (Label | undefined)[],
  prov: ProvenanceView,
): Refused | undefined {
  if (decl.safety === 'read_only') return undefined;
  for (let i = 0; i < argLeaves.length; i++) {
    const leaf = argLeaves[i]!;
    if (ruleCovering(decl.protected_fields, leaf.pointer)) continue;
    const label = (labels[i] = labelOf(prov, leaf.value));
    if (label.trusted) continue;
    const origin = label.synthesized
      ? `the model wrote it after reading ${label.sources.filter((s) => s !== 'user://prompt').join(', ')}`
      : `it came from ${label.sources.join(', ')}`;
    return {
      allow: false,
      rule: `taint:${leaf.pointer || '/'}`,
      reason: `${leaf.pointer || 'the arguments'} is untrusted (${origin}) and no field rule admits it into a ${decl.safety} tool`,
    };
  }
  return undefined;
}

export function checkDataFlow(
  decl: ToolDecl,
  args: Record<string, unknown>,
  prov: ProvenanceView,
  whole = false,
): FlowVerdict {
  try {
    const argLeaves = leaves(args);
    // Each argument's label, read once: the taint and sensitivity checks below both need it.
    const labels: (Label | undefined)[] = [];
    const protectedArgs = protectFields(decl.protected_fields, argLeaves, args, prov, whole);
    const { substitutions } = protectedArgs;
    let out = protectedArgs.out;
    // The first violation refuses the call; where a person may overrule it (`whole`) the rest is gated all the same.
    let refused = protectedArgs.refused ?? refuseTainted(decl, argLeaves, labels, prov);
    if (refused && !whole) return refused;
    // Only a call nothing else refuses puts a question to its principal.
    refused ??= protectedArgs.confirmable;

    const redacted: string[] = [];
    const maxRank = sensitivityRank(decl.sensitivity.max);
    let trustedArgs = true;
    for (let i = 0; i < argLeaves.length; i++) {
      const leaf = argLeaves[i]!;
      const label = (labels[i] ??= labelOf(prov, leaf.value));
      if (!label.trusted) trustedArgs = false;
      if (sensitivityRank(label.sensitivity) <= maxRank) continue;
      const redaction = decl.redactions.find((r) => covers(r.pointer, leaf.pointer));
      if (redaction && sensitivityRank(redaction.lowers_to) <= maxRank) {
        if (!redacted.includes(redaction.pointer)) {
          out = setAt(out, redaction.pointer, redaction.replace_with);
          redacted.push(redaction.pointer);
        }
        continue;
      }
      refused ??= {
        allow: false,
        rule: `sensitivity:${leaf.pointer}`,
        reason: `${leaf.pointer} carries ${label.sensitivity} data (from ${label.sources.join(', ') || 'the context'}); ${decl.id} accepts at most ${decl.sensitivity.max}`,
      };
      if (!whole) break;
    }
    if (refused) return whole ? { ...refused, args: out, ...(substitutions ? { substitutions } : {}) } : refused;
    const allowed: FlowVerdict = { allow: true, args: out, redacted, trustedArgs, leaves: argLeaves };
    if (substitutions) allowed.substitutions = substitutions;
    return allowed;
  } catch (err) {
    return {
      allow: false,
      rule: 'gate_error',
      reason: `the data-flow check failed, so the call is refused: ${(err as Error).message}`,
    };
  }
}
