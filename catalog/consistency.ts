// Workflow-safe: rules a manifest must keep, refused at load with the path that broke them.
import type { ManifestProblem } from './errors';
import { schemaHasPointer } from './json-pointer';
import { nameOf, serverOf, type Manifest } from './manifest';
import { sourceOf } from './result-place';
import { schemaProblems } from './schema';
import { isExtensionTool } from './tool-id';

export interface ConsistencyReport {
  errors: ManifestProblem[];
  /** Legal but probably not meant: `manifest check` prints them. */
  warnings: ManifestProblem[];
}

type ToolDecl = Manifest['tools'][number];

/** Where one tool's problems are reported: `err` and `warn` at a path below `tools[i]`. */
interface ToolReport {
  err: (path: string, message: string) => void;
  warn: (path: string, message: string) => void;
}

/** The tool's identity names a declared server of the right kind. */
function checkServer(manifest: Manifest, tool: ToolDecl, r: ToolReport): void {
  const serverName = serverOf(tool.id);
  const server = manifest.servers[serverName];
  if (!server) {
    r.err('.id', `names server "${serverName}", which servers does not declare`);
  } else if (isExtensionTool(tool.id) !== (server.kind === 'extension')) {
    r.err(
      '.id',
      isExtensionTool(tool.id)
        ? `ext: identities belong to extension servers; "${serverName}" is ${server.kind}`
        : `extension server "${serverName}" tools are named ext:${serverName}:${nameOf(tool.id)}`,
    );
  }
}

/** Safety, recovery and retries agree: nothing resends a call whose outcome is unknown. */
function checkRecovery(manifest: Manifest, tool: ToolDecl, r: ToolReport): void {
  const serverName = serverOf(tool.id);
  const server = manifest.servers[serverName];
  if (tool.safety === 'mutating' && tool.recovery === 'retry' && !tool.honours_idempotency_key) {
    r.err(
      '.recovery',
      'a mutating tool with recovery "retry" would resend a call whose outcome is unknown; use reconcile, escalate or fail, or declare honours_idempotency_key: true',
    );
  }
  if (tool.safety === 'mutating' && tool.retries_landed && !tool.honours_idempotency_key) {
    r.err('.retries_landed', 'repeating a mutating call that landed needs honours_idempotency_key: true');
  }
  if (tool.recovery === 'reconcile' && server && server.kind !== 'in_process' && !server.reconcile_tool) {
    r.err(
      '.recovery',
      `recovery "reconcile" needs a source that can reconcile; server "${serverName}" (${server.kind}) declares no reconcile_tool`,
    );
  }
  if (tool.recovery !== 'escalate' && tool.recovery !== 'reconcile' && tool.escalation)
    r.warn('.escalation', 'escalation is set but recovery is neither "escalate" nor "reconcile"');
  if (tool.recovery === 'retry' && tool.retry.maximum_attempts === 0 && tool.safety !== 'read_only') {
    r.warn('.retry.maximum_attempts', 'unlimited attempts on a tool that is not read-only');
  }
}

/** Field rules, redactions and the concurrency key point into the input schema; sources are declared. */
function checkFieldRules(manifest: Manifest, tool: ToolDecl, r: ToolReport): void {
  const fieldPointers = new Set<string>();
  tool.protected_fields.forEach((f, j) => {
    if (!schemaHasPointer(tool.input_schema, f.pointer))
      r.err(`.protected_fields[${j}].pointer`, `${f.pointer} is not a property of input_schema`);
    if (fieldPointers.has(f.pointer)) r.err(`.protected_fields[${j}].pointer`, `${f.pointer} has two rules`);
    fieldPointers.add(f.pointer);
    if ('from_sources' in f) {
      if (f.principal_confirms && !f.from_sources.includes('user://prompt'))
        r.err(
          `.protected_fields[${j}].principal_confirms`,
          "a confirmed value becomes the principal's words, which this rule does not admit: add user://prompt to from_sources, or drop principal_confirms",
        );
      for (const entry of f.from_sources) {
        const s = sourceOf(entry);
        if (s === tool.id)
          r.err(`.protected_fields[${j}].from_sources`, 'a tool cannot be the source of its own argument');
        else if (!s.startsWith('user://') && !manifest.tools.some((t) => t.id === s))
          r.err(`.protected_fields[${j}].from_sources`, `${s} is not a declared tool`);
      }
    }
  });
  if (tool.safety === 'read_only' && tool.protected_fields.length > 0)
    r.warn('.protected_fields', 'read-only tools are exempt from the taint gate; these rules only document intent');
  tool.redactions.forEach((rd, j) => {
    if (!schemaHasPointer(tool.input_schema, rd.pointer))
      r.err(`.redactions[${j}].pointer`, `${rd.pointer} is not a property of input_schema`);
  });
  if (tool.concurrency?.class === 'keyed' && !schemaHasPointer(tool.input_schema, tool.concurrency.key)) {
    r.err('.concurrency.key', `${tool.concurrency.key} is not a property of input_schema`);
  }
}

export function checkConsistency(manifest: Manifest): ConsistencyReport {
  const errors: ManifestProblem[] = [];
  const warnings: ManifestProblem[] = [];
  const seen = new Map<string, number>();

  manifest.tools.forEach((tool, i) => {
    const at = (p: string) => `tools[${i}]${p}`;
    const r: ToolReport = {
      err: (p, message) => errors.push({ path: at(p), message: `${tool.id}: ${message}` }),
      warn: (p, message) => warnings.push({ path: at(p), message: `${tool.id}: ${message}` }),
    };

    const dup = seen.get(tool.id);
    if (dup !== undefined) r.err('.id', `declared twice (first at tools[${dup}])`);
    seen.set(tool.id, i);

    checkServer(manifest, tool, r);
    for (const problem of schemaProblems(tool.input_schema))
      r.err('.input_schema', `not a valid JSON Schema: ${problem}`);
    if (tool.input_schema.type !== undefined && tool.input_schema.type !== 'object')
      r.err('.input_schema.type', 'tool arguments are an object');
    checkRecovery(manifest, tool, r);
    checkFieldRules(manifest, tool, r);
  });
  checkApprovers(manifest, errors, warnings);
  return { errors, warnings };
}

/** Approvers name declared tools; a tool that asks a person and no entry covers waits for nobody who may answer. */
function checkApprovers(manifest: Manifest, errors: ManifestProblem[], warnings: ManifestProblem[]): void {
  const approvers = manifest.approvers;
  if (!approvers) return;
  const declared = new Set(manifest.tools.map((t) => t.id));
  approvers.forEach((entry, i) => {
    if (entry.tools === '*') return;
    entry.tools.forEach((id, j) => {
      if (!declared.has(id))
        errors.push({ path: `approvers[${i}].tools[${j}]`, message: `${id} is not a declared tool` });
    });
  });
  manifest.tools.forEach((tool, i) => {
    const asks = tool.approval !== 'none';
    const escalates = tool.recovery === 'escalate' || (tool.recovery === 'reconcile' && tool.escalation);
    const covered = (kind: 'approve' | 'resolve') =>
      approvers.some(
        (e) =>
          (e.tools === '*' || e.tools.includes(tool.id)) &&
          (e.decisions ?? ['approve', 'deny', 'resolve']).includes(kind) &&
          (kind === 'approve' || !e.rules),
      );
    if (asks && !covered('approve'))
      warnings.push({
        path: `tools[${i}].approval`,
        message: `${tool.id}: asks a person, but no approvers entry may approve it; its calls wait until their deadline`,
      });
    if (escalates && !covered('resolve'))
      warnings.push({
        path: `tools[${i}].recovery`,
        message: `${tool.id}: escalates in-doubt calls, but no approvers entry may resolve them; they wait until their deadline`,
      });
  });
}
