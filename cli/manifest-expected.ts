// The shape a manifest problem's node expects, told from the manifest's JSON Schema.
import { manifestJsonSchema, nodeAt, type SchemaNode } from '../runtime/manifest-json-schema';
import { formatPath, parsePath } from '../runtime/manifest-file';
import { expectedShape } from '../runtime/manifest-shape';

/** Where the shape applies (a path as problems name it) and its lines. */
export interface Expected {
  at: string;
  lines: string[];
}

let schema: SchemaNode | undefined;

/**
 * The expected shape for a problem at `path`: an unknown or missing key's is its parent's (which keys it takes);
 * a path the schema does not describe (inside a free-form value) is told by its nearest described node.
 */
export function expectedAt(path: string, message: string): Expected | undefined {
  schema ??= manifestJsonSchema();
  let segments = parsePath(path);
  // An unknown key, or a required one missing: the mapping that holds it says what belongs there.
  if (/^unknown key |received undefined$/.test(message)) segments = segments.slice(0, -1);
  for (let n = segments.length; n >= 0; n--) {
    const node = nodeAt(schema, segments.slice(0, n));
    if (!node) continue;
    const last = segments[n - 1];
    return {
      at: formatPath(segments.slice(0, n)),
      lines: expectedShape(node, typeof last === 'string' ? last : undefined),
    };
  }
  return undefined;
}
