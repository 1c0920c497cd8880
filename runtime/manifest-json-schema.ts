/**
 * The manifest's JSON Schema, derived from the zod schema that parses manifests (catalog/manifest.ts)
 * with zod's own conversion: one source of truth. `manifest.schema.json` at the package root is this,
 * written by `npm run manifest:schema`; editors read that file, `manifest check` reads this.
 */
import { z } from 'zod';
import { Manifest } from '../catalog/manifest';

/** A node of the manifest's JSON Schema (draft-07), as far as toolplane reads it. */
export interface SchemaNode {
  $schema?: string;
  title?: string;
  description?: string;
  type?: string | string[];
  const?: unknown;
  enum?: unknown[];
  default?: unknown;
  examples?: unknown[];
  pattern?: string;
  format?: string;
  minimum?: number;
  exclusiveMinimum?: number;
  maximum?: number;
  minLength?: number;
  minItems?: number;
  properties?: Record<string, SchemaNode>;
  required?: string[];
  additionalProperties?: SchemaNode | boolean;
  propertyNames?: SchemaNode;
  items?: SchemaNode;
  anyOf?: SchemaNode[];
  oneOf?: SchemaNode[];
}

/**
 * Draft-07, which yaml-language-server (VS Code's YAML extension and most editors' YAML support)
 * validates with; it supports no later draft. Input side: a field with a default is optional.
 */
export function manifestJsonSchema(): SchemaNode {
  const schema = z.toJSONSchema(Manifest, { target: 'draft-7', io: 'input' }) as SchemaNode;
  return { $schema: schema.$schema, title: 'toolplane manifest', ...schema };
}

/** The branches of a node that is one of several shapes (a union), or the node itself. */
export function branchesOf(node: SchemaNode): SchemaNode[] {
  return node.oneOf ?? node.anyOf ?? [node];
}

/**
 * The schema node at a path into a manifest (`["tools", 0, "retry"]`): through properties, a
 * record's values and an array's items. Where a union's branches differ, the branch that declares
 * the next key is followed; undefined when nothing in the schema describes the path.
 */
export function nodeAt(root: SchemaNode, path: readonly (string | number)[]): SchemaNode | undefined {
  let node: SchemaNode | undefined = root;
  for (const segment of path) {
    if (!node) return undefined;
    node = childOf(node, segment);
  }
  return node;
}

function childOf(node: SchemaNode, segment: string | number): SchemaNode | undefined {
  const found: SchemaNode[] = [];
  for (const branch of branchesOf(node)) {
    if (typeof segment === 'number') {
      if (branch.items) found.push(branch.items);
    } else if (branch.properties && Object.prototype.hasOwnProperty.call(branch.properties, segment)) {
      found.push(branch.properties[segment]!);
    } else if (typeof branch.additionalProperties === 'object') {
      found.push(branch.additionalProperties);
    }
  }
  const distinct = [...new Map(found.map((n) => [JSON.stringify(n), n])).values()];
  if (distinct.length <= 1) return distinct[0];
  // Several branches declare the key (say `pointer` in each kind of field rule): one node with all of them.
  return { anyOf: distinct };
}

/** Every property path the schema declares, `.`-joined: `tools[].retry.initial_interval`, `servers.<name>.kind`. */
export function propertyPaths(root: SchemaNode): { path: string; node: SchemaNode; required: boolean }[] {
  const out: { path: string; node: SchemaNode; required: boolean }[] = [];
  const seen = new Set<string>();
  const walk = (node: SchemaNode, prefix: string): void => {
    for (const branch of branchesOf(node)) {
      for (const [key, child] of Object.entries(branch.properties ?? {})) {
        const path = prefix ? `${prefix}.${key}` : key;
        if (!seen.has(path)) {
          seen.add(path);
          out.push({ path, node: child, required: (branch.required ?? []).includes(key) });
        }
        walk(child, path);
      }
      if (typeof branch.additionalProperties === 'object') walk(branch.additionalProperties, `${prefix}.<name>`);
      if (branch.items) walk(branch.items, `${prefix}[]`);
    }
  };
  walk(root, '');
  return out;
}
