// Workflow-safe. Errors carry a string `code`; callers branch on it, never on message text.
import { errorBrand, hasBrand } from './error-brand';
import { ErrorCode } from './error-codes';

/** The codes of the catalogue's own errors (`CatalogError`), as registered in error-codes.ts. */
export const CatalogErrorCode = {
  ManifestInvalid: ErrorCode.ManifestInvalid,
  Unreachable: ErrorCode.Unreachable,
  InvalidArguments: ErrorCode.InvalidArguments,
  RegistryDrift: ErrorCode.RegistryDrift,
  DigestMismatch: ErrorCode.DigestMismatch,
  /** A run asked for what the worker does not declare. */
  RunRefused: ErrorCode.RunRefused,
  /** A run named a model endpoint, or a model, the worker does not declare. */
  ModelRefused: ErrorCode.ModelRefused,
} as const;
export type CatalogErrorCode = (typeof CatalogErrorCode)[keyof typeof CatalogErrorCode];

const TOOLPLANE = errorBrand('Error');
const CATALOG = errorBrand('CatalogError');

/**
 * The base of every toolplane error: a string `code` to branch on, typed `data`, and a brand, so
 * `is()` works across the workflow sandbox and across two copies of the package. toolplane's own
 * codes are error-codes.ts's registry (lint refuses one written as a literal in product code);
 * a user's subclass may bring its own.
 */
export class ToolplaneError<C extends string = string, D = unknown> extends Error {
  readonly [TOOLPLANE] = true;
  constructor(
    readonly code: C,
    message: string,
    readonly data?: D,
  ) {
    super(message);
    this.name = code;
  }

  static is(err: unknown): err is ToolplaneError {
    return hasBrand(err, TOOLPLANE);
  }
}

export class CatalogError<D = unknown> extends ToolplaneError<CatalogErrorCode, D> {
  readonly [CATALOG] = true;

  static override is(err: unknown): err is CatalogError {
    return hasBrand(err, CATALOG);
  }
}

/**
 * A value the gate must read exactly (an amount, a payee, a destination, a duration) that it could
 * not read; the call that carries it is refused. Its `name` stays `Error`, as the plain errors it
 * replaced had it: the refusal reasons runs record print the error whole, and those stay byte-identical.
 */
export class ValueUnreadable extends ToolplaneError<typeof ErrorCode.ValueUnreadable> {
  constructor(message: string) {
    super(ErrorCode.ValueUnreadable, message);
    this.name = 'Error';
  }
}

export interface ManifestProblem {
  /** Where in the file: `tools[2].retry.maximum_attempts`. */
  path: string;
  message: string;
  line?: number;
  /**
   * What was wrong: `syntax` (not YAML or JSON), `shape` (a field missing, unknown or of the wrong
   * type: the manifest's JSON Schema says what was expected there), or `rule` (well-formed, but the
   * declarations disagree, such as a mutating tool with `recovery: retry`).
   */
  kind?: 'syntax' | 'shape' | 'rule';
}

export class ManifestInvalid extends CatalogError<{ file: string; problems: ManifestProblem[] }> {
  constructor(file: string, problems: ManifestProblem[]) {
    super(
      CatalogErrorCode.ManifestInvalid,
      `${file}: invalid manifest\n` +
        problems.map((p) => `  ${file}${p.line ? `:${p.line}` : ''} at ${p.path || '(root)'}: ${p.message}`).join('\n'),
      { file, problems },
    );
  }
}

export class Unreachable extends CatalogError<{ toolId: string; reason: 'undeclared' | 'ungranted' | 'not_offered' }> {
  constructor(toolId: string, reason: 'undeclared' | 'ungranted' | 'not_offered', detail?: string) {
    super(
      CatalogErrorCode.Unreachable,
      `tool ${toolId} is unreachable from this run (${reason})${detail ? `: ${detail}` : ''}`,
      {
        toolId,
        reason,
      },
    );
  }
}

/** One way arguments fail a tool's schema. */
export interface ArgumentProblem {
  /** JSON pointer into the arguments. */
  pointer: string;
  message: string;
}

export class InvalidArguments extends CatalogError<{ toolId: string; problems: ArgumentProblem[] }> {
  constructor(toolId: string, problems: ArgumentProblem[]) {
    super(
      CatalogErrorCode.InvalidArguments,
      `arguments for ${toolId} fail its input schema: ` +
        problems.map((p) => `${p.pointer || '/'} ${p.message}`).join('; '),
      { toolId, problems },
    );
  }
}

export interface DriftProblem {
  toolId: string;
  field: string;
  declared?: string;
  implemented?: string;
}

function driftLine(p: DriftProblem): string {
  // A schema is shown whole, on lines of its own: the implementation's is what to paste into the manifest.
  if (p.field === 'input_schema')
    return (
      `  ${p.toolId}: input_schema differs\n` +
      `    manifest:       ${p.declared ?? '-'}\n` +
      `    implementation: ${p.implemented ?? '-'}\n` +
      "    (paste the implementation's as the manifest's input_schema; `toolplane manifest schemas --tools <module>` prints every tool's)"
    );
  return (
    `  ${p.toolId}: ${p.field}` +
    (p.declared !== undefined || p.implemented !== undefined
      ? ` (manifest: ${p.declared ?? '-'}, implementation: ${p.implemented ?? '-'})`
      : '')
  );
}

export class RegistryDrift extends CatalogError<{ problems: DriftProblem[] }> {
  constructor(problems: DriftProblem[]) {
    super(
      CatalogErrorCode.RegistryDrift,
      'tool implementations disagree with the manifest; refusing to start:\n' + problems.map(driftLine).join('\n'),
      { problems },
    );
  }
}

export interface RunInputProblem {
  /** Where in the run's input: `limits.deadline`, `grants[1]`. */
  path: string;
  message: string;
}

/** A run's input is malformed or asks for what the manifest does not declare; refused before the run starts. */
export class RunInputInvalid extends ToolplaneError<
  typeof ErrorCode.RunInputInvalid,
  { workflow: string; problems: RunInputProblem[] }
> {
  constructor(workflow: string, problems: RunInputProblem[]) {
    super(
      ErrorCode.RunInputInvalid,
      `invalid ${workflow} input, nothing was started:\n` +
        problems.map((p) => `  at ${p.path || '(root)'}: ${p.message}`).join('\n'),
      { workflow, problems },
    );
  }
}
