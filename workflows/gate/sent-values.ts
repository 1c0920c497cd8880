// Workflow-safe: the values a call sends under a field rule that takes them from named sources: the
// tool's receipt may repeat them, and that echo is not a foreign source of them (`noteSent`).
import { pointerCovers } from '../../catalog/json-pointer';
import type { ToolCall } from '../../catalog/tool-call';
import { leaves, type Leaf } from '../../common/json-leaves';

/** The pointers of a declaration's rules that take a value from named sources, read once per declaration. */
const SOURCED_POINTERS = new WeakMap<ToolCall['decl'], string[]>();

function sourcedPointers(decl: ToolCall['decl']): string[] {
  let rules = SOURCED_POINTERS.get(decl);
  if (rules === undefined) {
    rules = [];
    for (const r of decl.protected_fields) if ('from_sources' in r) rules.push(r.pointer);
    SOURCED_POINTERS.set(decl, rules);
  }
  return rules;
}

/** The values of the arguments' protected fields (`argLeaves`: their scalars, if already read). */
export function protectedValues(
  decl: ToolCall['decl'],
  args: Record<string, unknown>,
  argLeaves?: readonly Leaf[],
): string[] {
  const rules = sourcedPointers(decl);
  if (rules.length === 0) return [];
  const out: string[] = [];
  // Loops, not `some` with a closure per argument.
  for (const l of argLeaves ?? leaves(args)) {
    if (typeof l.value !== 'string') continue;
    for (const r of rules)
      if (pointerCovers(r, l.pointer)) {
        out.push(l.value);
        break;
      }
  }
  return out;
}
