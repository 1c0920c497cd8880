// Workflow-safe, shared by the gate and the tool activity: the scalars of a JSON value, with their pointers.

export interface Leaf {
  pointer: string;
  value: string | number | boolean | null;
}

/** Every scalar in a JSON value with its RFC 6901 pointer, in document order. */
export function leaves(value: unknown, pointer = ''): Leaf[] {
  const out: Leaf[] = [];
  collectLeaves(value, pointer, out);
  return out;
}

const escapeToken = (k: string): string =>
  k.includes('~') || k.includes('/') ? k.replace(/~/g, '~0').replace(/\//g, '~1') : k;

function collectLeaves(value: unknown, pointer: string, out: Leaf[]): void {
  if (value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
    out.push({ pointer, value });
  } else if (Array.isArray(value)) {
    // A hole in a sparse array is no element (as `flatMap` skips it).
    for (let i = 0; i < value.length; i++) if (i in value) collectLeaves(value[i], `${pointer}/${i}`, out);
  } else if (typeof value === 'object') {
    const o = value as Record<string, unknown>;
    for (const k of Object.keys(o)) collectLeaves(o[k], `${pointer}/${escapeToken(k)}`, out);
  }
}
