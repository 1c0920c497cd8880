// Workflow-safe: the manifest's shape, parsed with zod. Strict: an unknown key is an error. Each
// section's shape is its own module (server-decl, tool-decl, call-rules-decl, egress-decl, spend-decl,
// manifest-fields); this one assembles them and re-exports them for importers.
import { z } from 'zod';
import { ApproversDecl } from './approvers';
import { PrincipalsDecl } from './authority';
import { ModelsDecl } from './models-decl';
import { LimitsDecl } from './caps-decl';
import { serverName } from './manifest-fields';
import { ServerDecl } from './server-decl';
import { ToolDecl } from './tool-decl';

// Workflow code imports these from their own modules, which build no schema when a run starts.
export { SENSITIVITY_LEVELS, sensitivityRank, type Sensitivity } from './sensitivity';
export { durationMs } from './duration';
export { nameOf, serverOf } from './tool-id';
export { ServerDecl } from './server-decl';
export { RetryDecl, ProtectedFieldDecl, RedactionDecl, ConcurrencyDecl } from './call-rules-decl';
export { budgetPeriod, EgressBudgetDecl, EgressDecl, CarriedDecl } from './egress-decl';
export { SpendBudgetDecl, SpendDecl } from './spend-decl';
export { ToolDecl, type ToolDeclInput } from './tool-decl';

export const Safety = { ReadOnly: 'read_only', Idempotent: 'idempotent', Mutating: 'mutating' } as const;
export type Safety = (typeof Safety)[keyof typeof Safety];
/** Weakest first: a tool may declare itself stricter than the manifest, never laxer. */
export const SAFETY_ORDER: readonly Safety[] = ['read_only', 'idempotent', 'mutating'];

export const Recovery = { Retry: 'retry', Reconcile: 'reconcile', Fail: 'fail', Escalate: 'escalate' } as const;
export type Recovery = (typeof Recovery)[keyof typeof Recovery];

export const Manifest = z
  .strictObject({
    $schema: z
      .string()
      .optional()
      .describe(
        'The JSON Schema an editor validates this file with (JSON manifests; YAML uses a yaml-language-server modeline). Ignored by toolplane and left out of the digest.',
      ),
    version: z.literal(1).describe("The manifest format's version: 1."),
    name: z.string().min(1).optional().describe('A name for the deployment, shown by `manifest check`.'),
    servers: z
      .record(serverName, ServerDecl)
      .describe('Where tools run, by server name: in-process, MCP over stdio or HTTP, or dormant extensions.'),
    tools: z.array(ToolDecl).describe('Every tool a run may reach; anything not declared here is unreachable.'),
    principals: PrincipalsDecl.optional(),
    models: ModelsDecl.optional(),
    approvers: ApproversDecl.optional(),
    limits: LimitsDecl.optional(),
  })
  .describe('A toolplane manifest: every tool a deployment may reach, who may have what, which models it serves.');
export type Manifest = z.infer<typeof Manifest>;
export type ManifestInput = z.input<typeof Manifest>;
