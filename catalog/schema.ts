// Workflow-safe: JSON Schema validation of tool arguments with ajv (compiled once per schema).
import Ajv, { type ValidateFunction } from 'ajv';
import type { ArgumentProblem } from './errors';

// A workflow run evaluates this module afresh, so it must be cheap to start: the schemas it compiles
// were checked against JSON Schema's meta-schema when the worker loaded its manifest (schemaProblems),
// and compiling that meta-schema again in every run cost milliseconds before its first call.
const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: false, validateSchema: false });
/** By the schema object itself: a run's declarations are its own objects, and hashing one to name it cost more than its check. */
const compiled = new WeakMap<Record<string, unknown>, ValidateFunction>();
/** Checks a schema against the meta-schema too; only where a manifest is loaded, never in a run. */
let checking: Ajv | undefined;

export function compileSchema(schema: Record<string, unknown>): ValidateFunction {
  let fn = compiled.get(schema);
  if (!fn) {
    fn = ajv.compile(schema);
    compiled.set(schema, fn);
  }
  return fn;
}

/** The schema's own problems, or none. */
export function schemaProblems(schema: Record<string, unknown>): string[] {
  try {
    (checking ??= new Ajv({ allErrors: true, strict: false, validateFormats: false })).compile(schema);
    return [];
  } catch (err) {
    return [(err as Error).message];
  }
}

export function argumentProblems(validate: ValidateFunction, args: unknown): ArgumentProblem[] {
  if (validate(args)) return [];
  return (validate.errors ?? []).map((e) => {
    const missing = e.keyword === 'required' ? `/${(e.params as { missingProperty: string }).missingProperty}` : '';
    const extra =
      e.keyword === 'additionalProperties' ? `/${(e.params as { additionalProperty: string }).additionalProperty}` : '';
    return { pointer: `${e.instancePath}${missing}${extra}`, message: e.message ?? e.keyword };
  });
}
