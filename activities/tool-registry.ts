// The worker's tool implementations, checked against the manifest before the worker starts.
import { RegistryDrift, type DriftProblem } from '../catalog/errors';
import { canonicalJson } from '../catalog/digest';
import { SAFETY_ORDER, serverOf, type Manifest } from '../catalog/manifest';
import type { Tool } from './tool';

export class ToolRegistry {
  private readonly tools = new Map<string, Tool>();

  constructor(tools: Iterable<Tool> = []) {
    for (const t of tools) this.register(t);
  }

  register(tool: Tool): this {
    const id = tool.def().id;
    if (this.tools.has(id)) throw new RegistryDrift([{ toolId: id, field: 'registered twice' }]);
    this.tools.set(id, tool);
    return this;
  }

  get(id: string): Tool | undefined {
    return this.tools.get(id);
  }

  ids(): string[] {
    return [...this.tools.keys()];
  }

  /**
   * Every implementation must match its declaration: same description and input schema, a safety
   * class no weaker, and a `reconcile` when recovery needs one. A tool the manifest does not
   * declare is drift too. Declared in-process tools without an implementation are reported by
   * `missing`; the worker refuses those as well.
   */
  drift(manifest: Manifest): DriftProblem[] {
    const problems: DriftProblem[] = [];
    const declared = new Map(manifest.tools.map((t) => [t.id, t]));
    for (const [id, tool] of this.tools) {
      const decl = declared.get(id);
      if (!decl) {
        problems.push({ toolId: id, field: 'not declared in the manifest' });
        continue;
      }
      const server = manifest.servers[serverOf(id)];
      const origin = tool.origin ?? 'unknown';
      if (origin === 'unknown') {
        problems.push({
          toolId: id,
          field: "origin unknown: an implementation must declare origin 'builtin' or 'extension' (fails closed)",
        });
        continue;
      }
      const served = origin === 'builtin' ? 'in_process' : 'mcp_stdio, mcp_http or extension';
      if (!server || (origin === 'builtin') !== (server.kind === 'in_process'))
        problems.push({ toolId: id, field: 'server', declared: server?.kind, implemented: served });
      const def = tool.def();
      if (def.description !== decl.description)
        problems.push({ toolId: id, field: 'description', declared: decl.description, implemented: def.description });
      if (canonicalJson(def.inputSchema) !== canonicalJson(decl.input_schema)) {
        problems.push({
          toolId: id,
          field: 'input_schema',
          declared: canonicalJson(decl.input_schema),
          implemented: canonicalJson(def.inputSchema),
        });
      }
      if (SAFETY_ORDER.indexOf(def.safety) > SAFETY_ORDER.indexOf(decl.safety)) {
        problems.push({
          toolId: id,
          field: 'safety (the manifest is laxer than the implementation)',
          declared: decl.safety,
          implemented: def.safety,
        });
      } else if (def.safety !== decl.safety) {
        problems.push({
          toolId: id,
          field: 'safety (the implementation claims a weaker class)',
          declared: decl.safety,
          implemented: def.safety,
        });
      }
      if (decl.recovery === 'reconcile' && typeof tool.reconcile !== 'function')
        problems.push({ toolId: id, field: 'recovery reconcile needs a reconcile() implementation' });
      if (decl.carried?.resolve === 'tool' && typeof tool.carried !== 'function')
        problems.push({ toolId: id, field: 'carried resolve tool needs a carried() implementation' });
    }
    return problems;
  }

  missing(manifest: Manifest): DriftProblem[] {
    return manifest.tools
      .filter((t) => !this.tools.has(t.id))
      .map((t) => ({
        toolId: t.id,
        field:
          manifest.servers[serverOf(t.id)]?.kind === 'in_process'
            ? 'declared in-process tool has no implementation'
            : 'declared tool has no source on this worker',
      }));
  }

  assertMatches(manifest: Manifest): void {
    const problems = [...this.drift(manifest), ...this.missing(manifest)];
    if (problems.length > 0) throw new RegistryDrift(problems);
  }
}
