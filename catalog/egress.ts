// Workflow-safe: where a call's bytes go, read from its declaration and its arguments.
import { getAt } from './json-pointer';
import type { ToolDecl } from './manifest';
import { normaliseDestination } from './destination';
import { ValueUnreadable } from './errors';

export { normaliseDestination };

/**
 * The normalised destinations of a call, each once. A fixed label names one; pointers name the
 * values in the arguments (every element of an array). A value that cannot name a destination
 * throws, and the caller refuses (fail closed); an absent optional field names none.
 */
export function destinationsOf(decl: ToolDecl, args: unknown): string[] {
  const egress = decl.egress;
  if (!egress) return [];
  if ('destination' in egress) return [normaliseDestination(egress.destination)];
  const out = new Set<string>();
  for (const pointer of egress.destinations) {
    const value = getAt(args, pointer);
    if (value === undefined) continue;
    const values = Array.isArray(value) ? value : [value];
    values.forEach((v, i) => {
      const at = Array.isArray(value) ? `${pointer}/${i}` : pointer;
      if (typeof v !== 'string' && typeof v !== 'number')
        throw new ValueUnreadable(`${at} does not name a destination (a string or number is needed)`);
      const d = normaliseDestination(v);
      if (!d) throw new ValueUnreadable(`${at} is an empty destination`);
      out.add(d);
    });
  }
  return [...out];
}
