// Workflow-safe: JSON Schema validation of tool arguments with ajv (compiled once per schema).
import Ajv, { type ValidateFunction } from 'ajv';
import type { ArgumentProblem } from './errors';

const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: false });
const compiled = new Map<string, ValidateFunction>();

export function compileSchema(schema: Record<string, unknown>, cacheKey: string): ValidateFunction {
  let fn = compiled.get(cacheKey);
  if (!fn) {
    fn = ajv.compile(schema);
    compiled.set(cacheKey, fn);
  }
  return fn;
}

/** The schema's own problems, or none. */
export function schemaProblems(schema: Record<string, unknown>): string[] {
  try {
    ajv.compile(schema);
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
