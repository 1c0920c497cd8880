/**
 * Typed in-process tools from one zod schema: the handler's input type, the JSON Schema the manifest
 * declares, and the check the activity makes before the handler runs all come from `input`.
 */
import * as z from 'zod/v4/core';
import { ToolplaneError } from '../catalog/errors';
import type { Safety } from '../catalog/manifest';
import type { ArgumentProblem } from '../catalog/errors';
import type { CarriedContent, Reconciliation } from '../common/wire';
import type { Ctx, LedgerRef, Tool, ToolDef, ToolOutput } from './tool';
import { ToolInputInvalid } from './tool-errors';
import { ErrorCode } from '../catalog/error-codes';

/** A zod 4 object schema (classic `z.object`, `z.strictObject`, or zod mini's `z.object`). */
export type ToolInputSchema = z.$ZodObject;

/**
 * What `defineTool` takes. Handlers receive `z.output<S>`: the value the schema parsed, with its
 * defaults applied and its transforms run. The manifest declares `z.input<S>`, what a model sends.
 */
export interface ToolSpec<S extends ToolInputSchema> {
  /** The tool identity, `tool://server/name`; the manifest must declare it. */
  id: string;
  /** Must equal the manifest's `description`. */
  description: string;
  /** The input schema; its JSON Schema is derived with zod's `toJSONSchema` (see {@link deriveInputSchema}). */
  input: S;
  /** The safety class (`read_only`, `idempotent`, `mutating`); must equal the manifest's. */
  safety: Safety;
  /** `builtin` for this deployment's own code, `extension` for a tool another process serves. Declared, never inferred. */
  origin: 'builtin' | 'extension';
  /** Performs the call with the parsed arguments; see {@link Tool.call}. */
  call(ctx: Ctx, input: z.output<S>): Promise<ToolOutput>;
  /** As {@link Tool.callWithLedger}; when present it is called instead of `call`. */
  callWithLedger?(ctx: Ctx, input: z.output<S>, producedBy: LedgerRef | undefined): Promise<ToolOutput>;
  /** As {@link Tool.reconcile}. */
  reconcile?(ctx: Ctx, idempotencyKey: string): Promise<Reconciliation>;
  /** As {@link Tool.carried}; receives the parsed input too. */
  carried?(ctx: Ctx, input: z.output<S>): Promise<CarriedContent>;
}

/** A {@link Tool} defined by {@link defineTool}: it keeps its zod schema. */
export interface TypedTool<S extends ToolInputSchema = ToolInputSchema> extends Tool {
  /** Where the implementation comes from, as the spec declared it. */
  readonly origin: 'builtin' | 'extension';
  /** The schema the tool was defined with. */
  readonly input: S;
}

/** A zod schema that JSON Schema cannot express (a `z.date()`, a `z.bigint()`): the tool is refused where it is defined. */
export class ToolSchemaUnrepresentable extends ToolplaneError<
  typeof ErrorCode.ToolSchemaUnrepresentable,
  { toolId: string }
> {
  constructor(toolId: string, reason: string) {
    super(
      ErrorCode.ToolSchemaUnrepresentable,
      `${toolId}: its input schema has no JSON Schema a manifest could declare (${reason}); ` +
        'use types JSON can carry (strings, numbers, booleans, arrays, objects)',
      { toolId },
    );
  }
}

/**
 * The JSON Schema a manifest declares for a tool whose input is `schema`: zod's own `toJSONSchema`,
 * for JSON Schema draft-07 (the draft the plane's ajv evaluates) and the *input* side of the schema
 * (what a model sends: a field with a default is optional), without `$schema`.
 *
 * @throws ToolSchemaUnrepresentable when part of the schema has no JSON Schema form.
 */
export function deriveInputSchema(schema: ToolInputSchema, toolId = 'tool'): Record<string, unknown> {
  let derived: Record<string, unknown>;
  try {
    // Through JSON: what a manifest holds and a digest hashes is plain JSON.
    const generated = z.toJSONSchema(schema, { target: 'draft-7', io: 'input', unrepresentable: 'throw' });
    derived = JSON.parse(JSON.stringify(generated)) as Record<string, unknown>;
  } catch (err) {
    throw new ToolSchemaUnrepresentable(toolId, err instanceof Error ? err.message : String(err));
  }
  const { $schema: _draft, ...declared } = derived;
  return declared;
}

/** A zod issue's path as a JSON pointer into the arguments, as the gate names its problems. */
function pointerOf(path: readonly PropertyKey[]): string {
  return path.map((p) => `/${String(p).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}

function problemsOf(issues: readonly z.$ZodIssue[]): ArgumentProblem[] {
  return issues.flatMap((i) =>
    i.code === 'unrecognized_keys'
      ? i.keys.map((k) => ({ pointer: pointerOf([...i.path, k]), message: 'is not allowed by the schema' }))
      : [{ pointer: pointerOf(i.path), message: i.message }],
  );
}

/**
 * Defines an in-process tool from one zod object schema. The handlers' `input` is typed
 * `z.output<typeof input>`; `def().inputSchema` is {@link deriveInputSchema} of it, which the worker
 * compares with the manifest's `input_schema` at start (a difference refuses the start and prints the
 * derived schema). Before any handler runs, the call's arguments are parsed with the schema: arguments
 * it rejects (a refinement the JSON Schema cannot carry, say) fail the call with
 * {@link ToolInputInvalid}, never retried, and the handler is not called.
 *
 * @example
 * ```ts
 * import { z } from 'zod';
 * import { defineTool } from 'toolplane';
 *
 * export const saveNote = defineTool({
 *   id: 'tool://notes/save',
 *   description: 'Save a note.',
 *   input: z.strictObject({ text: z.string() }),
 *   safety: 'idempotent',
 *   origin: 'builtin',
 *   async call(ctx, { text }) {
 *     ctx.check();
 *     return { saved: text.length };
 *   },
 * });
 * ```
 *
 * @throws ToolSchemaUnrepresentable when the schema has no JSON Schema form.
 */
export function defineTool<S extends ToolInputSchema>(spec: ToolSpec<S>): TypedTool<S> {
  const { id, description, input, safety, origin } = spec;
  const def: ToolDef = { id, description, inputSchema: deriveInputSchema(input, id), safety };
  // Async, so that a schema with async refinements parses too.
  const parse = async (raw: unknown): Promise<z.output<S>> => {
    const result = await z.safeParseAsync(input, raw);
    if (!result.success) throw new ToolInputInvalid(id, problemsOf(result.error.issues));
    return result.data;
  };
  const tool: TypedTool<S> = {
    origin,
    input,
    def: () => def,
    call: async (ctx, raw) => spec.call(ctx, await parse(raw)),
  };
  // Handlers are called as methods of the spec, so a spec written as a class instance keeps its `this`.
  if (spec.callWithLedger)
    tool.callWithLedger = async (ctx, raw, producedBy) => spec.callWithLedger!(ctx, await parse(raw), producedBy);
  if (spec.reconcile) tool.reconcile = (ctx, key) => spec.reconcile!(ctx, key);
  if (spec.carried) tool.carried = async (ctx, raw) => spec.carried!(ctx, await parse(raw));
  return tool;
}
