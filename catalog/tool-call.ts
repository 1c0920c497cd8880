// Workflow-safe: one call to one tool, refused here, before any effect exists, if it cannot run.
import { InvalidArguments, Unreachable } from './errors';
import type { ToolDecl } from './manifest';
import { argumentProblems, compileSchema } from './schema';
import type { CatalogEntry, ToolCatalog } from './tool-catalog';

export class ToolCall {
  readonly decl: ToolDecl;
  private constructor(
    readonly toolId: string,
    private readonly entry: CatalogEntry,
    readonly args: Record<string, unknown>,
  ) {
    this.decl = entry.decl;
  }

  /** The declaration's digest (hashed when first read). */
  get digest(): string {
    return this.entry.digest;
  }

  /**
   * @throws Unreachable when the tool is not declared or not granted: from the run's point of
   *   view an undeclared tool is one it cannot reach, not an "unknown tool" to fall back from.
   * @throws InvalidArguments when the arguments fail the tool's input schema.
   */
  static prepare(catalog: ToolCatalog, toolId: string, args: unknown): ToolCall {
    const declared = catalog.declared(toolId);
    if (!declared) throw new Unreachable(toolId, catalog.isDeclared(toolId) ? 'ungranted' : 'undeclared');
    if (!declared.granted) throw new Unreachable(toolId, 'ungranted');
    const validate = compileSchema(declared.decl.input_schema);
    const problems = argumentProblems(validate, args);
    if (problems.length > 0) throw new InvalidArguments(toolId, problems);
    return new ToolCall(toolId, declared, args as Record<string, unknown>);
  }

  get mutates(): boolean {
    return this.decl.safety !== 'read_only';
  }
}
