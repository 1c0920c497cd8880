// Workflow-safe: what data may flow into which tool. Decided before the call is scheduled,
// identically on replay. Anything unexpected refuses (fail closed).
import { setAt } from '../catalog/json-pointer';
import { sensitivityRank, type ProtectedFieldDecl, type ToolDecl } from '../catalog/manifest';
import { leaves, type Provenance } from './provenance';

export type FlowVerdict =
  | { allow: true; args: Record<string, unknown>; redacted: string[] }
  | { allow: false; rule: string; reason: string };

function covers(rulePointer: string, pointer: string): boolean {
  return pointer === rulePointer || pointer.startsWith(`${rulePointer}/`);
}

/** "The recipient must come from the CRM": satisfied strictly by provenance. */
function checkProtectedField(rule: Extract<ProtectedFieldDecl, { from_sources: string[] }>, pointer: string, value: string | number, prov: Provenance): string | undefined {
  const prods = prov.productionsOf(value);
  const allowed = rule.from_sources;
  if (prods.length === 0) return `${pointer} was written by the model, not produced by ${allowed.join(' or ')}`;
  // Every source of the value must be allowed, unless the user wrote it themselves.
  const userWrote = prods.some((p) => p.trusted && allowed.includes(p.source));
  const foreign = [...new Set(prods.filter((p) => !p.trusted && !allowed.includes(p.source)).map((p) => p.source))];
  if (foreign.length > 0 && !userWrote) return `${pointer} also came from ${foreign.join(', ')}, which the rule does not allow (allowed: ${allowed.join(', ')})`;
  const fromAllowed = prods.filter((p) => allowed.includes(p.source));
  if (fromAllowed.length === 0) return `${pointer} was not produced by ${allowed.join(' or ')}`;
  if (!fromAllowed.some((p) => p.trusted || p.callTrusted)) {
    return `${pointer} came from ${fromAllowed.map((p) => p.source).join(', ')}, but that call was steered by untrusted input`;
  }
  return undefined;
}

export function checkDataFlow(decl: ToolDecl, args: Record<string, unknown>, prov: Provenance): FlowVerdict {
  try {
    const argLeaves = leaves(args);
    const rules = decl.protected_fields;
    const ruleFor = (pointer: string) => rules.find((r) => covers(r.pointer, pointer));

    for (const rule of rules) {
      if (!('from_sources' in rule)) continue;
      for (const leaf of argLeaves.filter((l) => covers(rule.pointer, l.pointer))) {
        if (leaf.value === null || typeof leaf.value === 'boolean') return { allow: false, rule: `protected_field:${rule.pointer}`, reason: `${leaf.pointer} is not a value any source produced` };
        const problem = checkProtectedField(rule, leaf.pointer, leaf.value, prov);
        if (problem) return { allow: false, rule: `protected_field:${rule.pointer}`, reason: problem };
      }
    }

    if (decl.safety !== 'read_only') {
      for (const leaf of argLeaves) {
        if (ruleFor(leaf.pointer)) continue;
        const label = prov.labelOf(leaf.value);
        if (!label.trusted) {
          const origin = label.synthesized ? `the model wrote it after reading ${label.sources.filter((s) => s !== 'user://prompt').join(', ')}` : `it came from ${label.sources.join(', ')}`;
          return { allow: false, rule: `taint:${leaf.pointer || '/'}`, reason: `${leaf.pointer || 'the arguments'} is untrusted (${origin}) and no field rule admits it into a ${decl.safety} tool` };
        }
      }
    }

    let out = args;
    const redacted: string[] = [];
    for (const leaf of argLeaves) {
      const label = prov.labelOf(leaf.value);
      if (sensitivityRank(label.sensitivity) <= sensitivityRank(decl.sensitivity.max)) continue;
      const redaction = decl.redactions.find((r) => covers(r.pointer, leaf.pointer));
      if (redaction && sensitivityRank(redaction.lowers_to) <= sensitivityRank(decl.sensitivity.max)) {
        if (!redacted.includes(redaction.pointer)) {
          out = setAt(out, redaction.pointer, redaction.replace_with);
          redacted.push(redaction.pointer);
        }
        continue;
      }
      return {
        allow: false,
        rule: `sensitivity:${leaf.pointer}`,
        reason: `${leaf.pointer} carries ${label.sensitivity} data (from ${label.sources.join(', ') || 'the context'}); ${decl.id} accepts at most ${decl.sensitivity.max}`,
      };
    }
    return { allow: true, args: out, redacted };
  } catch (err) {
    return { allow: false, rule: 'gate_error', reason: `the data-flow check failed, so the call is refused: ${(err as Error).message}` };
  }
}
