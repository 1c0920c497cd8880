// Workflow-safe: what the worker's manifest lets a run have. A run's input may only ask; the
// worker intersects what it asks with what the manifest grants its principal.
import { z } from 'zod';
import { CatalogError, CatalogErrorCode } from './errors';
import { KNOWN_CAPABILITIES } from './capabilities';
import { capsOf, looserCaps, tighterCaps, type RunCaps } from './caps';
import { LimitsDecl } from './caps-decl';
import type { ModelRequest } from './model-request';

export type { ModelRequest };
// The model endpoints and how a run's request resolves to one are their own modules; importers find them here too.
export { ModelEndpointDecl, ModelsDecl, DEFAULT_MODELS, type ProviderEndpointDecl } from './models-decl';
export { ModelRefused, resolveModel, type ResolvedModel } from './resolve-model';

const toolGrant = z.union([z.literal('*'), z.array(z.string().min(1))]);
const names = z.array(z.string().min(1));

export const PrincipalDecl = z
  .strictObject({
    tools: toolGrant
      .default('*')
      .describe('Tools this principal may be granted: exact identities, or "*" for every declared tool.'),
    capabilities: names
      .default([])
      .describe('Capabilities this principal may hold, such as `extension-runtime`. None unless listed.'),
    models: toolGrant
      .default('*')
      .describe('Model endpoints (names in `models`) this principal\'s runs may use, or "*" for every declared one.'),
    share_facts_with: names
      .default([])
      .describe(
        'Principals (exact names, or "*") for whom the facts this principal\'s runs write count as their own words; to everyone else they are untrusted data.',
      ),
    limits: LimitsDecl.optional().describe(
      "Caps on each of this principal's runs, tightening the worker-wide `limits` (never loosening them); several matching groups: the loosest of theirs.",
    ),
  })
  .describe('What one principal (or group, or "*") may be granted.');
export type PrincipalDecl = z.infer<typeof PrincipalDecl>;

/**
 * Principals by verified subject (or, on a worker that allows asserted principals, by name);
 * `group:<name>` entries apply to a subject whose token lists that group; `"*"` to every other.
 */
export const PrincipalsDecl = z
  .record(z.string().min(1), PrincipalDecl)
  .describe(
    'Which principals may be granted which tools, capabilities and models: by verified subject, `group:<name>`, or "*" for every other. Absent: any principal may be granted any declared tool.',
  );
export type PrincipalsDecl = z.infer<typeof PrincipalsDecl>;

/** What a run asks for. Everything here is a request; the worker decides. */
export interface RunRequest {
  principal: string;
  /** The principal's verified groups; set by the worker from a credential, never taken from a run. */
  groups?: readonly string[];
  /** Tools the run asks to reach (exact identities); default: every tool the principal may be granted. */
  grants?: readonly string[];
  capabilities?: readonly string[];
  /** The manifest digest the caller pinned; a worker with another manifest refuses the run. */
  manifestDigest?: string;
}

/** The worker's answer, recorded in history: what this run holds. */
export interface RunAuthority {
  principal: string;
  manifestDigest: string;
  grants: string[];
  capabilities: string[];
  /** Asked for, declared, but not granted to this principal: withheld, and shown in the run's memo. */
  withheld: { grants: string[]; capabilities: string[] };
}

export const RunRefusedReason = {
  Undeclared: 'undeclared',
  UnknownCapability: 'unknown_capability',
  DigestMismatch: 'digest_mismatch',
  Ungoverned: 'ungoverned',
} as const;
export type RunRefusedReason = (typeof RunRefusedReason)[keyof typeof RunRefusedReason];

export class RunRefused extends CatalogError<{ reason: RunRefusedReason; names: string[] }> {
  constructor(reason: RunRefusedReason, names: string[], message: string) {
    super(CatalogErrorCode.RunRefused, message, { reason, names });
  }
}

/** A principals section as written (defaults not yet applied) or as parsed. */
type Principals = Record<string, z.input<typeof PrincipalDecl>>;

/** Who a principal is to the manifest: its verified subject (or asserted name) and its groups. */
export interface Who {
  principal: string;
  groups?: readonly string[];
}

/**
 * The manifest's entry for a principal: its own entry by exact name; else the union of the entries of
 * its groups (`group:<name>`); else `"*"`; else nothing.
 */
function principalDecl(principals: Principals | undefined, who: Who): PrincipalDecl {
  // No section: any principal may be granted any declared tool, and holds no capability.
  if (!principals) return { tools: '*', capabilities: [], models: '*', share_facts_with: [] };
  // Own entries only: a principal named `__proto__` or `constructor` is a name, not a lookup into Object.
  const own = (name: string): PrincipalDecl | undefined => {
    const d = Object.prototype.hasOwnProperty.call(principals, name) ? principals[name] : undefined;
    return (
      d && {
        tools: d.tools ?? '*',
        capabilities: d.capabilities ?? [],
        models: d.models ?? '*',
        share_facts_with: d.share_facts_with ?? [],
        ...(d.limits ? { limits: d.limits } : {}),
      }
    );
  };
  const exact = own(who.principal);
  if (exact) return exact;
  const byGroup = (who.groups ?? []).flatMap((g) => own(`group:${g}`) ?? []);
  const union = (pick: (d: PrincipalDecl) => '*' | string[]): '*' | string[] =>
    byGroup.some((d) => pick(d) === '*') ? '*' : [...new Set(byGroup.flatMap((d) => pick(d) as string[]))];
  if (byGroup.length > 0)
    return {
      tools: union((d) => d.tools),
      capabilities: [...new Set(byGroup.flatMap((d) => d.capabilities))],
      models: union((d) => d.models),
      share_facts_with: [...new Set(byGroup.flatMap((d) => d.share_facts_with))],
      ...groupLimits(byGroup),
    };
  return own('*') ?? { tools: [], capabilities: [], models: [], share_facts_with: [] };
}

/** The union of group entries' caps: the loosest of each, uncapped where any group leaves it so. */
function groupLimits(byGroup: PrincipalDecl[]): { limits?: LimitsDecl } {
  const caps = byGroup.map((d) => capsOf(d.limits)).reduce((a, b) => looserCaps(a, b));
  return caps ? { limits: toDecl(caps) } : {};
}

function toDecl(caps: RunCaps): LimitsDecl {
  return {
    ...(caps.maxTurns !== undefined ? { max_turns: caps.maxTurns } : {}),
    ...(caps.maxToolCalls !== undefined ? { max_tool_calls: caps.maxToolCalls } : {}),
    ...(caps.maxTokens !== undefined ? { max_tokens: caps.maxTokens } : {}),
    ...(caps.maxCostMicros !== undefined ? { max_cost_micros: caps.maxCostMicros } : {}),
    ...(caps.deadline !== undefined ? { deadline: caps.deadline } : {}),
    ...(caps.maxDelegationDepth !== undefined ? { max_delegation_depth: caps.maxDelegationDepth } : {}),
  };
}

/**
 * The worker's caps on a run of this principal: the manifest's worker-wide `limits`, tightened by
 * the principal's entry; undefined when nothing is capped.
 */
export function capsFor(manifest: { limits?: LimitsDecl; principals?: Principals }, who: Who): RunCaps | undefined {
  return tighterCaps(capsOf(manifest.limits), capsOf(principalDecl(manifest.principals, who).limits));
}

/** May this principal be granted this declared tool? */
export function mayGrant(principals: Principals | undefined, who: Who, toolId: string): boolean {
  const tools = principalDecl(principals, who).tools;
  return tools === '*' || tools.includes(toolId);
}

export function mayHold(principals: Principals | undefined, who: Who, capability: string): boolean {
  return principalDecl(principals, who).capabilities.includes(capability);
}

/** May this principal's runs use this declared model endpoint? */
export function mayUseModel(principals: Principals | undefined, who: Who, endpoint: string): boolean {
  const models = principalDecl(principals, who).models;
  return models === '*' || models.includes(endpoint);
}

/** Do the facts `writer`'s runs wrote count as `reader`'s own words? (Manifest-declared sharing only.) */
export function sharesFactsWith(principals: Principals | undefined, writer: string, reader: string): boolean {
  if (writer === reader) return true;
  const shared = principalDecl(principals, { principal: writer }).share_facts_with;
  return shared.includes('*') || shared.includes(reader);
}

/**
 * Intersects a run's request with the manifest. Naming what the manifest does not declare
 * refuses the run; asking for more than the principal may have withholds the excess.
 */
export function authorize(
  manifest: { tools: readonly { id: string }[]; principals?: Principals },
  digest: string,
  request: RunRequest,
): RunAuthority {
  if (request.manifestDigest !== undefined && request.manifestDigest !== digest) {
    throw new RunRefused(
      RunRefusedReason.DigestMismatch,
      [request.manifestDigest],
      `the run is pinned to manifest ${request.manifestDigest}; this worker's manifest is ${digest}`,
    );
  }
  const declared = manifest.tools.map((t) => t.id);
  const asked = request.grants ?? declared;
  const undeclared = asked.filter((id) => !declared.includes(id));
  if (undeclared.length > 0) {
    throw new RunRefused(
      RunRefusedReason.Undeclared,
      undeclared,
      `the run asks for tools this worker does not declare: ${undeclared.join(', ')}`,
    );
  }
  const caps = request.capabilities ?? [];
  const unknown = caps.filter((c) => !KNOWN_CAPABILITIES.includes(c));
  if (unknown.length > 0) {
    throw new RunRefused(
      RunRefusedReason.UnknownCapability,
      unknown,
      `the run asks for capabilities this worker does not know: ${unknown.join(', ')}`,
    );
  }
  const principals = manifest.principals;
  const who: Who = { principal: request.principal, groups: request.groups };
  return {
    principal: request.principal,
    manifestDigest: digest,
    grants: asked.filter((id) => mayGrant(principals, who, id)),
    capabilities: caps.filter((c) => mayHold(principals, who, c)),
    withheld: {
      grants: asked.filter((id) => !mayGrant(principals, who, id)),
      capabilities: caps.filter((c) => !mayHold(principals, who, c)),
    },
  };
}
