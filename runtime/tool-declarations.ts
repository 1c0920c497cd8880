/**
 * Node-only: the manifest declarations tool implementations imply (what `toolplane manifest schemas`
 * prints), how a manifest differs from them, and the manifest text with them written in.
 */
import { Document, isAlias, isMap, isScalar, isSeq, parseDocument, visit, type Node } from 'yaml';
import { canonicalJson } from '../catalog/digest';
import type { Manifest, Safety } from '../catalog/manifest';
import type { Tool } from '../activities/tool';

/** The part of a manifest declaration an implementation decides; recovery, sensitivity and rules are the operator's. */
export interface ImpliedDeclaration {
  id: string;
  description: string;
  input_schema: Record<string, unknown>;
  safety: Safety;
}

export function impliedDeclarations(tools: readonly Tool[]): ImpliedDeclaration[] {
  return tools.map((t) => {
    const d = t.def();
    return { id: d.id, description: d.description, input_schema: d.inputSchema, safety: d.safety };
  });
}

export interface DeclarationDifference {
  toolId: string;
  /** `input_schema` or `description` differ; `undeclared`: the manifest has no such tool. */
  field: 'input_schema' | 'description' | 'undeclared';
  declared?: unknown;
  implied?: unknown;
}

/** Where the manifest's declarations differ from what the implementations imply (the fields a generator may write). */
export function declarationDifferences(
  manifest: Manifest,
  implied: readonly ImpliedDeclaration[],
): DeclarationDifference[] {
  const declared = new Map(manifest.tools.map((t) => [t.id, t]));
  const out: DeclarationDifference[] = [];
  for (const i of implied) {
    const d = declared.get(i.id);
    if (!d) {
      out.push({ toolId: i.id, field: 'undeclared', implied: i });
      continue;
    }
    if (d.description !== i.description)
      out.push({ toolId: i.id, field: 'description', declared: d.description, implied: i.description });
    if (canonicalJson(d.input_schema) !== canonicalJson(i.input_schema))
      out.push({ toolId: i.id, field: 'input_schema', declared: d.input_schema, implied: i.input_schema });
  }
  return out;
}

export interface Rewritten {
  text: string;
  /** `tool://x/y input_schema`, one per field written. */
  written: string[];
  /** Differences left for a person, and why. */
  skipped: { toolId: string; field: string; reason: string }[];
}

/**
 * The manifest text with each differing `description` and `input_schema` replaced by the implied one.
 * YAML keeps its comments and layout (a schema written in flow style stays in flow style); a field
 * that is a YAML anchor or alias is left alone (another declaration shares it). Undeclared tools are
 * not added: their recovery, sensitivity and rules are the operator's to decide.
 */
export function rewriteDeclarations(text: string, json: boolean, differences: DeclarationDifference[]): Rewritten {
  const written: string[] = [];
  const skipped: Rewritten['skipped'] = [];
  const changes = differences.filter((d) => d.field !== 'undeclared');
  for (const d of differences)
    if (d.field === 'undeclared')
      skipped.push({ toolId: d.toolId, field: 'tool', reason: 'not declared: add it (see the printed declaration)' });
  if (json) {
    const raw = JSON.parse(text) as { tools: Record<string, unknown>[] };
    for (const c of changes) {
      const tool = raw.tools.find((t) => t.id === c.toolId)!;
      tool[c.field] = c.implied;
      written.push(`${c.toolId} ${c.field}`);
    }
    return { text: `${JSON.stringify(raw, null, 2)}\n`, written, skipped };
  }
  // Spliced into the source text, so every other line, comment and quote stays as the operator wrote it.
  const doc = parseDocument(text);
  const tools = doc.get('tools', true);
  const splices: { from: number; to: number; text: string }[] = [];
  for (const c of changes) {
    const entry = isSeq(tools) ? tools.items.find((t) => isMap(t) && t.get('id') === c.toolId) : undefined;
    const current = isMap(entry) ? (entry.get(c.field, true) as Node | undefined) : undefined;
    if (!current?.range) {
      skipped.push({ toolId: c.toolId, field: c.field, reason: 'not found in the file' });
      continue;
    }
    if (isAlias(current) || current.anchor) {
      skipped.push({ toolId: c.toolId, field: c.field, reason: 'a YAML anchor or alias shares it: edit it by hand' });
      continue;
    }
    const from = current.range[0];
    let to = current.range[1];
    while (to > from && /\s/.test(text[to - 1]!)) to--; // a block ends after its newline: keep that
    const column = from - text.lastIndexOf('\n', from - 1) - 1;
    splices.push({ from, to, text: yamlValue(c.implied, column, isCollection(current) && current.flow === true) });
    written.push(`${c.toolId} ${c.field}`);
  }
  let out = text;
  for (const s of splices.sort((a, b) => b.from - a.from)) out = out.slice(0, s.from) + s.text + out.slice(s.to);
  return { text: out, written, skipped };
}

function isCollection(n: Node): n is Node & { flow?: boolean } {
  return isMap(n) || isSeq(n);
}

/** `value` as YAML to put at `column`: one flow line, or a block whose later lines are indented to the column. */
function yamlValue(value: unknown, column: number, flow: boolean): string {
  const lines = compactYaml(value, flow).split('\n');
  return lines.map((l, i) => (i === 0 ? l : ' '.repeat(column) + l)).join('\n');
}

/**
 * `value` as YAML in the manifests' hand-written style: a list of scalars, and a mapping of nothing
 * but scalars and such lists, on one line (`email: { type: string, format: email }`, `required: [a, b]`).
 */
export function compactYaml(value: unknown, flow = false): string {
  const doc = new Document(value);
  const leaf = (n: unknown): boolean => isScalar(n) || (isSeq(n) && n.items.every(isScalar));
  visit(doc, {
    Seq(_key, node) {
      if (node.items.every(isScalar)) node.flow = true;
    },
    Map(_key, node) {
      if (node.items.length > 0 && node.items.every((p) => leaf(p.value))) node.flow = true;
    },
  });
  if (flow && isCollection(doc.contents as Node)) (doc.contents as { flow?: boolean }).flow = true;
  return (
    doc
      .toString({ lineWidth: 0 })
      .trimEnd()
      // `[a, b]`, as manifests write lists; no quoted scalar is touched (flow scalars cannot hold brackets unquoted).
      .replace(/\[ ([^[\]{}"'\n]*) \]/g, '[$1]')
  );
}
