// Workflow-safe: rules a manifest must keep, refused at load with the path that broke them.
import type { ManifestProblem } from './errors';
import { schemaHasPointer } from './json-pointer';
import { nameOf, serverOf, type Manifest } from './manifest';
import { schemaProblems } from './schema';
import { isExtensionTool } from './tool-id';

export interface ConsistencyReport {
  errors: ManifestProblem[];
  /** Legal but probably not meant: `manifest check` prints them. */
  warnings: ManifestProblem[];
}

export function checkConsistency(manifest: Manifest): ConsistencyReport {
  const errors: ManifestProblem[] = [];
  const warnings: ManifestProblem[] = [];
  const seen = new Map<string, number>();

  manifest.tools.forEach((tool, i) => {
    const at = (p: string) => `tools[${i}]${p}`;
    const err = (p: string, message: string) => errors.push({ path: at(p), message: `${tool.id}: ${message}` });
    const warn = (p: string, message: string) => warnings.push({ path: at(p), message: `${tool.id}: ${message}` });

    const dup = seen.get(tool.id);
    if (dup !== undefined) err('.id', `declared twice (first at tools[${dup}])`);
    seen.set(tool.id, i);

    const serverName = serverOf(tool.id);
    const server = manifest.servers[serverName];
    if (!server) {
      err('.id', `names server "${serverName}", which servers does not declare`);
    } else if (isExtensionTool(tool.id) !== (server.kind === 'extension')) {
      err(
        '.id',
        isExtensionTool(tool.id)
          ? `ext: identities belong to extension servers; "${serverName}" is ${server.kind}`
          : `extension server "${serverName}" tools are named ext:${serverName}:${nameOf(tool.id)}`,
      );
    }

    for (const problem of schemaProblems(tool.input_schema))
      err('.input_schema', `not a valid JSON Schema: ${problem}`);
    if (tool.input_schema.type !== undefined && tool.input_schema.type !== 'object')
      err('.input_schema.type', 'tool arguments are an object');

    if (tool.safety === 'mutating' && tool.recovery === 'retry' && !tool.honours_idempotency_key) {
      err(
        '.recovery',
        'a mutating tool with recovery "retry" would resend a call whose outcome is unknown; use reconcile, escalate or fail, or declare honours_idempotency_key: true',
      );
    }
    if (tool.safety === 'mutating' && tool.retries_landed && !tool.honours_idempotency_key) {
      err('.retries_landed', 'repeating a mutating call that landed needs honours_idempotency_key: true');
    }
    if (tool.recovery === 'reconcile' && server && server.kind !== 'in_process' && !server.reconcile_tool) {
      err(
        '.recovery',
        `recovery "reconcile" needs a source that can reconcile; server "${serverName}" (${server.kind}) declares no reconcile_tool`,
      );
    }
    if (tool.recovery !== 'escalate' && tool.recovery !== 'reconcile' && tool.escalation)
      warn('.escalation', 'escalation is set but recovery is neither "escalate" nor "reconcile"');
    if (tool.recovery === 'retry' && tool.retry.maximum_attempts === 0 && tool.safety !== 'read_only') {
      warn('.retry.maximum_attempts', 'unlimited attempts on a tool that is not read-only');
    }

    const fieldPointers = new Set<string>();
    tool.protected_fields.forEach((f, j) => {
      if (!schemaHasPointer(tool.input_schema, f.pointer))
        err(`.protected_fields[${j}].pointer`, `${f.pointer} is not a property of input_schema`);
      if (fieldPointers.has(f.pointer)) err(`.protected_fields[${j}].pointer`, `${f.pointer} has two rules`);
      fieldPointers.add(f.pointer);
      if ('from_sources' in f) {
        for (const s of f.from_sources) {
          if (s === tool.id)
            err(`.protected_fields[${j}].from_sources`, 'a tool cannot be the source of its own argument');
          else if (!s.startsWith('user://') && !manifest.tools.some((t) => t.id === s))
            err(`.protected_fields[${j}].from_sources`, `${s} is not a declared tool`);
        }
      }
    });
    if (tool.safety === 'read_only' && tool.protected_fields.length > 0)
      warn('.protected_fields', 'read-only tools are exempt from the taint gate; these rules only document intent');
    tool.redactions.forEach((r, j) => {
      if (!schemaHasPointer(tool.input_schema, r.pointer))
        err(`.redactions[${j}].pointer`, `${r.pointer} is not a property of input_schema`);
    });
    if (tool.concurrency?.class === 'keyed' && !schemaHasPointer(tool.input_schema, tool.concurrency.key)) {
      err('.concurrency.key', `${tool.concurrency.key} is not a property of input_schema`);
    }
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
