// The field tables of the manifest reference (docs/manifest.md), made from the manifest's JSON Schema,
// so the reference names every field, its type and its default exactly as the parser takes them.
import { branchesOf, type SchemaNode } from '../runtime/manifest-json-schema';
import { flowYaml, typeName } from '../runtime/manifest-shape';

interface Occurrence {
  path: string;
  node: SchemaNode;
  required: boolean;
  /** The union branch it was found in (`kind: mcp_stdio`), when its parent is a discriminated union. */
  branch?: string;
  /** In a union without a discriminator, the fields other forms require in its place. */
  insteadOf?: string[];
}

/** A union branch's required fields that not every branch requires. */
function ownRequired(branch: SchemaNode, all: SchemaNode[]): string[] {
  return (branch.required ?? []).filter((k) => !all.every((b) => (b.required ?? []).includes(k)));
}

function discriminatorOf(branches: SchemaNode[]): string | undefined {
  if (branches.length < 2) return undefined;
  const first = branches[0]!.properties ?? {};
  return Object.keys(first).find((k) => branches.every((b) => b.properties?.[k]?.const !== undefined));
}

function occurrences(node: SchemaNode, prefix: string, out: Occurrence[], depth: number): void {
  const branches = branchesOf(node);
  const discriminator = discriminatorOf(branches);
  for (const b of branches) {
    const branch = discriminator ? String(b.properties![discriminator]!.const) : undefined;
    for (const [key, child] of Object.entries(b.properties ?? {})) {
      const path = prefix ? `${prefix}.${key}` : key;
      const insteadOf =
        !discriminator && branches.length > 1 && ownRequired(b, branches).includes(key)
          ? branches.filter((o) => o !== b).flatMap((o) => ownRequired(o, branches))
          : undefined;
      out.push({
        path,
        node: child,
        required: (b.required ?? []).includes(key),
        ...(branch ? { branch } : {}),
        ...(insteadOf ? { insteadOf } : {}),
      });
      if (depth !== 0) occurrences(child, path, out, depth - 1);
    }
    if (depth !== 0 && typeof b.additionalProperties === 'object')
      occurrences(b.additionalProperties, `${prefix}.<name>`, out, depth - 1);
    if (depth !== 0 && b.items) occurrences(b.items, `${prefix}[]`, out, depth - 1);
  }
}

const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** One field's row; `union` is its parent's discriminator and branch count when the parent is a union. */
function row(
  path: string,
  found: Occurrence[],
  union: { discriminator: string; branches: number } | undefined,
): string {
  const branches = [...new Set(found.flatMap((o) => (o.branch ? [o.branch] : [])))];
  let type = [...new Set(found.map((o) => typeName(o.node)))].join(' or ');
  let description: string;
  if (union && path.endsWith(`.${union.discriminator}`)) {
    type = found.map((o) => JSON.stringify(o.node.const)).join(' | ');
    description = found.map((o) => `\`${String(o.node.const)}\`: ${o.node.description ?? ''}`).join(' ');
  } else {
    const texts = [...new Set(found.map((o) => o.node.description ?? ''))];
    description = texts.length === 1 ? texts[0]! : found.map((o) => `${o.branch}: ${o.node.description}`).join(' ');
    if (union && branches.length > 0 && branches.length < union.branches)
      description = `(${union.discriminator} ${branches.join(', ')}) ${description}`;
    const insteadOf = found[0]!.insteadOf;
    if (insteadOf) description = `(instead of ${insteadOf.map((k) => `\`${k}\``).join(', ')}) ${description}`;
  }
  const defaults = [...new Set(found.map((o) => (o.node.default !== undefined ? flowYaml(o.node.default) : '')))];
  const fallback = found.every((o) => o.required) ? '**required**' : '';
  const dflt = defaults.length === 1 && defaults[0] ? `\`${defaults[0]}\`` : fallback;
  return `| \`${path}\` | ${cell(type)} | ${cell(dflt)} | ${cell(description)} |`;
}

/**
 * The table of one section: `top` for the manifest's own keys, else every field under that key
 * (`tools`: `tools`, `tools[].id`, `tools[].retry.initial_interval`, ...).
 */
export function fieldTable(root: SchemaNode, section: string): string {
  const found: Occurrence[] = [];
  if (section === 'top') occurrences(root, '', found, 0);
  else {
    const node = root.properties?.[section];
    if (!node) throw new Error(`the manifest has no section ${section}`);
    found.push({ path: section, node, required: (root.required ?? []).includes(section) });
    occurrences(node, section, found, -1);
  }
  const byPath = new Map<string, Occurrence[]>();
  for (const o of found) byPath.set(o.path, [...(byPath.get(o.path) ?? []), o]);
  const lines = ['| field | type | default | meaning |', '| --- | --- | --- | --- |'];
  for (const [path, all] of byPath) {
    const parent = path.slice(0, path.lastIndexOf('.'));
    const siblings = found.filter((o) => o.path.startsWith(`${parent}.`) && o.branch);
    const discriminator = all.some((o) => o.branch) ? discriminatorFor(root, parent) : undefined;
    const union = discriminator ? { discriminator, branches: new Set(siblings.map((o) => o.branch)).size } : undefined;
    lines.push(row(path, all, union));
  }
  return lines.join('\n');
}

/** The discriminator of the union at a `.`-joined path (`servers.<name>` → `kind`). */
function discriminatorFor(root: SchemaNode, path: string): string | undefined {
  let node: SchemaNode | undefined = root;
  for (const part of path.split('.')) {
    for (const segment of part.split(/(?=\[\])/)) {
      if (!node) return undefined;
      if (segment === '[]') node = node.items;
      else if (segment === '<name>')
        node = typeof node.additionalProperties === 'object' ? node.additionalProperties : undefined;
      else node = branchesOf(node).find((b) => b.properties?.[segment])?.properties?.[segment];
    }
  }
  return node ? discriminatorOf(branchesOf(node)) : undefined;
}

const BLOCK = /(<!-- fields: ([a-z$]+) -->\n)[\s\S]*?(<!-- \/fields -->)/g;

/** The reference with every `<!-- fields: <section> -->` block made anew from the schema. */
export function withFieldTables(reference: string, root: SchemaNode): string {
  return reference.replace(
    BLOCK,
    (_, open: string, section: string, close: string) => `${open}${fieldTable(root, section)}\n${close}`,
  );
}
