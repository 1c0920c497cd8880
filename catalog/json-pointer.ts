// Workflow-safe: RFC 6901 pointers into arguments and into JSON Schemas.

export function pointerTokens(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

export function getAt(value: unknown, pointer: string): unknown {
  let cur: unknown = value;
  for (const token of pointerTokens(pointer)) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[token];
  }
  return cur;
}

export function setAt<T>(value: T, pointer: string, replacement: unknown): T {
  const tokens = pointerTokens(pointer);
  if (tokens.length === 0) return replacement as T;
  const copy: unknown = structuredCloneJson(value);
  let cur = copy as Record<string, unknown>;
  for (const token of tokens.slice(0, -1)) {
    const next = cur[token];
    if (next === null || typeof next !== 'object') return copy as T;
    cur = next as Record<string, unknown>;
  }
  const last = tokens[tokens.length - 1]!;
  if (last in cur) cur[last] = replacement;
  return copy as T;
}

function structuredCloneJson(v: unknown): unknown {
  return v === undefined ? undefined : JSON.parse(JSON.stringify(v));
}

/** Whether a JSON Schema declares the property a pointer names (through `properties` and `items`). */
export function schemaHasPointer(schema: unknown, pointer: string): boolean {
  let cur: unknown = schema;
  for (const token of pointerTokens(pointer)) {
    if (cur === null || typeof cur !== 'object') return false;
    const s = cur as Record<string, unknown>;
    const props = s.properties as Record<string, unknown> | undefined;
    if (props && Object.prototype.hasOwnProperty.call(props, token)) {
      cur = props[token];
    } else if (/^\d+$/.test(token) && s.items && typeof s.items === 'object') {
      cur = s.items;
    } else {
      return false;
    }
  }
  return true;
}

/** Whether a rule's pointer names this pointer or one of its ancestors ("/to" covers "/to" and "/to/0", not "/tone"). */
export function pointerCovers(rulePointer: string, pointer: string): boolean {
  if (pointer === rulePointer) return true;
  return (
    pointer.length > rulePointer.length &&
    pointer.charCodeAt(rulePointer.length) === 0x2f && // "/"
    pointer.startsWith(rulePointer)
  );
}
