// Workflow-safe. Errors carry a string `code`; callers branch on it, never on message text.

export const CatalogErrorCode = {
  ManifestInvalid: 'ManifestInvalid',
  Unreachable: 'Unreachable',
  InvalidArguments: 'InvalidArguments',
  RegistryDrift: 'RegistryDrift',
  DigestMismatch: 'DigestMismatch',
} as const;
export type CatalogErrorCode = (typeof CatalogErrorCode)[keyof typeof CatalogErrorCode];

const BRAND = Symbol.for('toolplane.CatalogError');

export class CatalogError<D = unknown> extends Error {
  readonly [BRAND] = true;
  constructor(
    readonly code: CatalogErrorCode,
    message: string,
    readonly data?: D,
  ) {
    super(message);
    this.name = code;
  }

  /** Works across the workflow sandbox, where `instanceof` sees another realm's class. */
  static is(err: unknown): err is CatalogError {
    return typeof err === 'object' && err !== null && (err as Record<symbol, unknown>)[BRAND] === true;
  }
}

export interface ManifestProblem {
  /** Where in the file: `tools[2].retry.maximum_attempts`. */
  path: string;
  message: string;
  line?: number;
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
    super(CatalogErrorCode.Unreachable, `tool ${toolId} is unreachable from this run (${reason})${detail ? `: ${detail}` : ''}`, {
      toolId,
      reason,
    });
  }
}

export interface ArgumentProblem {
  /** JSON pointer into the arguments. */
  pointer: string;
  message: string;
}

export class InvalidArguments extends CatalogError<{ toolId: string; problems: ArgumentProblem[] }> {
  constructor(toolId: string, problems: ArgumentProblem[]) {
    super(
      CatalogErrorCode.InvalidArguments,
      `arguments for ${toolId} fail its input schema: ` + problems.map((p) => `${p.pointer || '/'} ${p.message}`).join('; '),
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

export class RegistryDrift extends CatalogError<{ problems: DriftProblem[] }> {
  constructor(problems: DriftProblem[]) {
    super(
      CatalogErrorCode.RegistryDrift,
      'tool implementations disagree with the manifest; refusing to start:\n' +
        problems
          .map(
            (p) =>
              `  ${p.toolId}: ${p.field}` +
              (p.declared !== undefined || p.implemented !== undefined ? ` (manifest: ${p.declared ?? '-'}, implementation: ${p.implemented ?? '-'})` : ''),
          )
          .join('\n'),
      { problems },
    );
  }
}
