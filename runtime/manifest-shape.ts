/**
 * A node of the manifest's JSON Schema told in words: its type, an example, and the shape of a
 * mapping (required and optional fields, the kinds of a union). `manifest check` prints it beside an
 * error; the manifest reference's field tables use the same words.
 */
import { stringify } from 'yaml';
import { branchesOf, type SchemaNode } from './manifest-json-schema';

const json = (v: unknown): string => JSON.stringify(v);

/** The name of a value type in a few words: `duration`, `"read_only" | "mutating"`, `list of tool identity`. */
export function typeName(node: SchemaNode): string {
  if (node.title) return node.title;
  if (node.const !== undefined) return json(node.const);
  if (node.enum) return node.enum.map(json).join(' | ');
  const branches = node.oneOf ?? node.anyOf;
  if (branches) {
    if (branches.every((b) => b.type === 'object' && b.properties)) return 'mapping';
    return [...new Set(branches.map(typeName))].join(' or ');
  }
  switch (node.type) {
    case 'array':
      return node.items && Object.keys(node.items).length > 0 ? `list of ${typeName(node.items)}` : 'list';
    case 'object':
      if (node.properties) return 'mapping';
      if (typeof node.additionalProperties === 'object' && Object.keys(node.additionalProperties).length > 0) {
        const key = node.propertyNames?.title ?? 'name';
        return `map of ${key} to ${typeName(node.additionalProperties)}`;
      }
      return 'mapping';
    case 'integer':
      return node.minimum === 0 ? 'integer ≥ 0' : node.exclusiveMinimum === 0 ? 'integer > 0' : 'integer';
    case 'number':
      return node.minimum !== undefined ? `number ≥ ${node.minimum}` : 'number';
    case 'string':
      return node.format === 'uri' ? 'URL' : 'string';
    case 'boolean':
      return 'boolean';
    default:
      return 'any JSON value';
  }
}

/** A value the schema accepts, for a one-line example. */
export function exampleOf(node: SchemaNode): unknown {
  if (node.examples && node.examples.length > 0) return node.examples[0];
  if (node.const !== undefined) return node.const;
  if (node.enum) return node.enum[0];
  const branches = node.oneOf ?? node.anyOf;
  if (branches) return exampleOf(branches[0]!);
  switch (node.type) {
    case 'array':
      return node.items && (node.minItems ?? 0) > 0 ? [exampleOf(node.items)] : [];
    case 'object': {
      if (node.properties) {
        const required = node.required ?? [];
        return Object.fromEntries(required.map((k) => [k, exampleOf(node.properties![k]!)]));
      }
      if (typeof node.additionalProperties === 'object' && node.propertyNames?.examples?.length) {
        return { [String(node.propertyNames.examples[0])]: exampleOf(node.additionalProperties) };
      }
      return {};
    }
    case 'integer':
    case 'number':
      return node.minimum ?? 1;
    case 'boolean':
      return node.default ?? false;
    case 'string':
      return node.format === 'uri' ? 'https://example.com/' : '...';
    default:
      return {};
  }
}

/** One line of YAML in flow style: `{ kind: mcp_stdio, command: node }`. */
export function flowYaml(value: unknown): string {
  return stringify(value, { collectionStyle: 'flow', lineWidth: 0 }).trim();
}

function fieldList(branch: SchemaNode, which: 'required' | 'optional'): string[] {
  const required = branch.required ?? [];
  return Object.entries(branch.properties ?? {})
    .filter(([k]) => (which === 'required') === required.includes(k))
    .map(([k, v]) =>
      which === 'required'
        ? `${k} (${typeName(v)})`
        : v.default !== undefined
          ? `${k} (default ${flowYaml(v.default)})`
          : k,
    );
}

/** The lines of a mapping's shape: its required fields and their types, its optional ones and their defaults. */
function mappingShape(branch: SchemaNode): string[] {
  const required = fieldList(branch, 'required');
  const optional = fieldList(branch, 'optional');
  return [
    ...(required.length ? [`required: ${required.join(', ')}`] : []),
    ...(optional.length ? [`optional: ${optional.join(', ')}`] : []),
    ...(branch.additionalProperties === false ? ['no other keys'] : []),
  ];
}

/**
 * What a node expects, as indented lines: what it is, its shape, the values it allows, an example.
 * `key` names the node in the example (`safety: read_only`); without it the example is the value alone.
 */
export function expectedShape(node: SchemaNode, key?: string): string[] {
  const lines: string[] = [];
  if (node.description) lines.push(node.description);
  const branches = branchesOf(node).filter((b) => b.type === 'object' && b.properties);
  if (branches.length > 1) {
    lines.push('one of:');
    for (const b of branches) lines.push(`  ${branchLabel(b, branches)}: ${mappingShape(b).join('; ')}`);
  } else if (branches.length === 1) {
    lines.push(...mappingShape(branches[0]!));
  } else if (node.enum) {
    lines.push(`one of ${node.enum.map(json).join(', ')}`);
  } else if (node.const !== undefined) {
    lines.push(`exactly ${json(node.const)}`);
  } else {
    lines.push(`a ${typeName(node)}${allowed(node)}`);
  }
  const example = exampleOf(node);
  lines.push(`example: ${key !== undefined ? `${key}: ` : ''}${flowYaml(example)}`);
  return lines;
}

/** Names a union's branch: by its discriminator (`kind: mcp_stdio`), else by the fields only it requires. */
function branchLabel(branch: SchemaNode, all: SchemaNode[]): string {
  const discriminator = Object.entries(branch.properties ?? {}).find(
    ([k, v]) => v.const !== undefined && all.every((b) => b.properties?.[k]?.const !== undefined),
  );
  if (discriminator) return `${discriminator[0]}: ${flowYaml(discriminator[1].const)}`;
  const own = (branch.required ?? []).filter((k) => !all.every((b) => (b.required ?? []).includes(k)));
  return `with ${own.join(', ')}`;
}

/** What a scalar allows beyond its type: the values of a branch's enum, a pattern. */
function allowed(node: SchemaNode): string {
  const parts: string[] = [];
  for (const leaf of node.oneOf ?? node.anyOf ?? [node]) {
    if (leaf.enum) parts.push(`one of ${leaf.enum.map(json).join(', ')}`);
    if (leaf.pattern) parts.push(`matching ${leaf.pattern}`);
  }
  return parts.length ? ` (${parts.join('; ')})` : '';
}
