// Reads a worker's identity configuration from a JSON file (`toolplane worker --identity`): the
// issuers it trusts. A relative `jwksFile` is read relative to the file.
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { ToolplaneError } from '../../catalog/errors';
import type { IdentityConfig, IssuerConfig } from '../../identity/credentials';
import { ErrorCode } from '../../catalog/error-codes';

const IssuerShape = z.strictObject({
  issuer: z.string().min(1),
  audience: z.string().min(1),
  jwks: z.looseObject({ keys: z.array(z.looseObject({})) }).optional(),
  jwksFile: z.string().min(1).optional(),
  jwksUrl: z.string().url().optional(),
  groupsClaim: z.string().min(1).optional(),
  requireWorkflowBinding: z.boolean().optional(),
  requireInputBinding: z.boolean().optional(),
});

const IdentityShape = z.strictObject({
  issuers: z.array(IssuerShape).min(1),
  clockToleranceSeconds: z.number().nonnegative().optional(),
  maxCredentialLifetimeSeconds: z.number().positive().optional(),
});

// Every option the configuration has, the file may set: a key added to IdentityConfig or IssuerConfig
// and not here fails to compile, rather than a worker refusing a file that names it.
type Missing<T, S> = Exclude<keyof T, keyof S>;
const fileCoversConfig: [
  Missing<IdentityConfig, z.infer<typeof IdentityShape>>,
  Missing<IssuerConfig, z.infer<typeof IssuerShape>>,
] extends [never, never]
  ? true
  : never = true;
void fileCoversConfig;

export function loadIdentityFile(file: string): IdentityConfig {
  let parsed: z.infer<typeof IdentityShape>;
  try {
    parsed = IdentityShape.parse(JSON.parse(fs.readFileSync(file, 'utf8')));
  } catch (err) {
    const detail =
      err instanceof z.ZodError
        ? err.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')
        : (err as Error).message;
    throw new ToolplaneError(ErrorCode.IdentityConfigInvalid, `${file}: not an identity file (${detail})`);
  }
  const dir = path.dirname(path.resolve(file));
  return {
    ...parsed,
    issuers: parsed.issuers.map((i) => ({
      ...i,
      ...(i.jwks ? { jwks: i.jwks } : {}),
      ...(i.jwksFile ? { jwksFile: path.resolve(dir, i.jwksFile) } : {}),
    })),
  };
}
