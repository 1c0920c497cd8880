// The first activity of every run: the worker establishes who the run acts for (a verified
// credential, or the ticket of the run it continues or of its delegating parent), answers what it may
// hold, and issues the ticket every later call presents. Recorded in history, so replay sees the same answer.
import { createHash } from 'node:crypto';
import { Context } from '@temporalio/activity';
import {
  authorize,
  capsFor,
  ModelRefused,
  mayUseModel,
  resolveModel,
  RunRefused,
  RunRefusedReason,
} from '../catalog/authority';
import { EXTENSION_RUNTIME } from '../catalog/capabilities';
import { LimitsDecl } from '../catalog/caps-decl';
import { ManifestInvalid, type ManifestProblem } from '../catalog/errors';
import { manifestDigest } from '../catalog/digest';
import { withoutDefaults } from '../catalog/tool-decl-defaults';
import type { Manifest } from '../catalog/manifest';
import { modelPermit, toolPermit, type RunIdentity } from '../common/ticket';
import { asFinalRefusalAsync } from './catalog-failure';
import { IdentityRefused, type CredentialVerifier, type VerifiedCredential } from '../identity/credentials';
import { MCP_SESSION_WORKFLOW, type SessionPass } from '../common/gateway-protocol';
import type { RunIds, TicketIssuer } from './identity/tickets';
import { rememberOpening } from './identity/run-opening';
import { spendCredential } from './identity/credential-spend';
import { inputBindingOf } from '../common/input-binding';
import type { AuthorizeActivities, AuthorizeRequest, AuthorizeResult } from '../common/wire';

export interface AuthorizeDeps {
  manifest: Manifest;
  tickets: TicketIssuer;
  /** Verifies run credentials; without it a run's principal is its word (see `insecureAssertedPrincipals`). */
  credentials?: CredentialVerifier;
  /** Accept a principal a run only names, on a worker whose manifest declares principals (tests, local work). */
  insecureAssertedPrincipals?: boolean;
  /** Serve `toolRun`, which has no data-flow gate (tests, internals). Off unless configured. */
  allowUngovernedToolRun?: boolean;
}

/** What a run's own credential, or the ticket it carries, establishes. */
interface Established {
  identity: RunIdentity;
  /** A carried ticket bounds what the run may ask for. */
  bound?: { grants: string[]; capabilities: string[] };
}

function only<T>(asked: readonly T[] | undefined, within: readonly T[]): T[] {
  return (asked ?? within).filter((x) => within.includes(x));
}

/**
 * The caps a manifest given as an object (not loaded from a file, so never parsed) declares are
 * checked here, when the worker is built: a bad cap refuses the worker, typed, instead of capping nothing.
 */
function refuseBadCaps(manifest: Manifest): void {
  const problems: ManifestProblem[] = [];
  const check = (path: string, decl: unknown) => {
    if (decl === undefined) return;
    const parsed = LimitsDecl.safeParse(decl);
    if (!parsed.success)
      for (const issue of parsed.error.issues)
        problems.push({ path: [path, ...issue.path.map(String)].join('.'), message: issue.message });
  };
  check('limits', manifest.limits);
  for (const [name, p] of Object.entries(manifest.principals ?? {}))
    check(`principals[${JSON.stringify(name)}].limits`, p.limits);
  if (problems.length > 0) throw new ManifestInvalid("the worker's manifest", problems);
}

/** A session pass as a credential to spend: named by the digest of its MAC, until it expires. */
function passSpent(pass: SessionPass): VerifiedCredential {
  return {
    ...pass.identity,
    issuer: pass.identity.issuer ?? 'the MCP gateway',
    spend: {
      digest: createHash('sha256').update(pass.mac).digest('hex'),
      expiresAt: Math.ceil(pass.expiresAt / 1000),
    },
  };
}

export function createAuthorizeActivities(deps: AuthorizeDeps): AuthorizeActivities {
  refuseBadCaps(deps.manifest);
  const digest = manifestDigest(deps.manifest);

  /** The ticket a continued run or a delegated child shows, checked against the ids Temporal gave it. */
  const fromCarried = (run: RunIds, req: AuthorizeRequest): Established => {
    const c = req.carried!;
    const related =
      c.from === 'continued'
        ? c.workflowId === run.workflowId
        : run.workflowId.startsWith(`${c.workflowId}/delegated-`);
    if (!related || !deps.tickets.carries({ workflowId: c.workflowId, runId: c.runId }, c.carry))
      throw new IdentityRefused(
        'bad_signature',
        `the ticket this run carries from ${c.from === 'continued' ? 'the run it continues' : 'its parent'} (${c.workflowId}) was not issued to that run by this worker`,
      );
    return { identity: c.carry.identity, bound: { grants: c.carry.grants, capabilities: c.carry.capabilities } };
  };

  /** The MCP gateway's pass: made with this worker's key for this session's workflow id, unexpired, spent once. */
  const fromPass = async (run: RunIds, req: AuthorizeRequest): Promise<Established> => {
    const pass = req.pass!;
    const type = Context.current().info.workflowType;
    const refusal =
      type === MCP_SESSION_WORKFLOW ? deps.tickets.sessionPassRefusal(run.workflowId, pass) : 'bad_signature';
    if (refusal)
      throw new IdentityRefused(
        refusal,
        refusal === 'expired'
          ? `the MCP gateway's session pass for ${run.workflowId} expired before the run was authorized`
          : `the session pass this run carries was not issued by this worker's gateway to an MCP session ${run.workflowId} (${type})`,
      );
    if (req.principal && req.principal !== pass.identity.principal)
      throw new IdentityRefused(
        'principal_mismatch',
        `the run asks to act as ${req.principal}, but its pass is ${pass.identity.principal}'s`,
      );
    await spendCredential(passSpent(pass), { kind: 'run' }, deps.credentials?.tolerance ?? 0);
    return { identity: pass.identity };
  };

  const establish = async (run: RunIds, req: AuthorizeRequest): Promise<Established> => {
    if (req.carried) return fromCarried(run, req);
    if (req.pass) return fromPass(run, req);
    if (deps.credentials) {
      const v = await deps.credentials.verify(req.credential, {
        workflowId: run.workflowId,
        requireBinding: true,
        what: 'the run',
        // The type as Temporal reports it, the input's digest as the run's own code computed it.
        inputBinding: inputBindingOf(Context.current().info.workflowType ?? '', req.inputDigest),
      });
      if (req.principal && req.principal !== v.principal)
        throw new IdentityRefused(
          'principal_mismatch',
          `the run asks to act as ${req.principal}, but its credential is ${v.principal}'s`,
        );
      // Spent last, once everything else accepted it: a refused run leaves the token unspent.
      await spendCredential(v, { kind: 'run' }, deps.credentials.tolerance);
      return { identity: { principal: v.principal, groups: v.groups, issuer: v.issuer } };
    }
    if (deps.manifest.principals && !deps.insecureAssertedPrincipals)
      throw new IdentityRefused(
        'asserted',
        `this worker declares principals but verifies no credentials, so it cannot tell who ${req.principal} is; ` +
          'configure its identity (issuers), or insecureAssertedPrincipals for tests',
      );
    if (!req.principal) throw new IdentityRefused('missing', 'the run names no principal and carries no credential');
    return { identity: { principal: req.principal, groups: [] } };
  };

  return {
    async authorizeRun(req: AuthorizeRequest): Promise<AuthorizeResult> {
      return asFinalRefusalAsync(async () => {
        const info = Context.current().info;
        if (!info.isLocal)
          throw new IdentityRefused(
            'asserted',
            'authorizeRun answers only the run it runs beside (a local activity); it was scheduled as an activity',
          );
        const run = {
          workflowId: info.workflowExecution?.workflowId ?? '',
          runId: info.workflowExecution?.runId ?? '',
        };
        if (req.ungoverned && !deps.allowUngovernedToolRun) {
          throw new RunRefused(
            RunRefusedReason.Ungoverned,
            ['toolRun'],
            'this worker does not serve toolRun, which has no data-flow gate; start agentRun, or configure the worker with allowUngovernedToolRun',
          );
        }
        const { identity, bound } = await establish(run, req);
        const model = req.model ? resolveModel(deps.manifest.models, req.model) : undefined;
        if (model && !mayUseModel(deps.manifest.principals, identity, model.endpoint))
          throw new ModelRefused(
            `${identity.principal} may not use model endpoint "${model.endpoint}" on this worker (its principals entry lists the endpoints it may)`,
            { endpoint: model.endpoint },
          );
        const asked = bound
          ? { grants: only(req.grants, bound.grants), capabilities: only(req.capabilities, bound.capabilities) }
          : { grants: req.grants, capabilities: req.capabilities };
        const authority = authorize(deps.manifest, digest, {
          ...req,
          ...asked,
          principal: identity.principal,
          groups: identity.groups,
        });
        const permits = authority.grants
          .filter((id) => !id.startsWith('ext:') || authority.capabilities.includes(EXTENSION_RUNTIME))
          .map(toolPermit);
        if (model) permits.push(modelPermit(model.endpoint));
        const caps = capsFor(deps.manifest, identity);
        const tools = deps.manifest.tools.filter((t) => authority.grants.includes(t.id));
        const issued = deps.tickets.issue(run, identity, permits, authority.grants, authority.capabilities);
        // The run's first call, sent to this worker as it usually is, finds the opening without reading history.
        // The run's first local activity is its first opening: a call that names no principal acts under it.
        rememberOpening(run, issued, tools, info.activityId === '1');
        const { identity: _inTicket, ...ticket } = issued;
        // Recorded once per run: only what the run cannot restore itself (`readAuthority`).
        const { grants, capabilities, withheld, principal, manifestDigest, ...rest } = authority;
        const sameIds = grants.length === tools.length && tools.every((t, i) => t.id === grants[i]);
        const { groups, ...named } = identity;
        return {
          ...rest,
          // The identity's principal, the digest the run pinned, an empty list of groups: the run restores them.
          ...(principal === identity.principal ? {} : { principal }),
          ...(manifestDigest === req.manifestDigest ? {} : { manifestDigest }),
          ...(sameIds ? {} : { grants }),
          ...(capabilities.length ? { capabilities } : {}),
          ...(withheld.grants.length || withheld.capabilities.length ? { withheld } : {}),
          // Which endpoint and model answer, for the record; a script the worker plays stays on the worker.
          ...(model
            ? { model: model.decl.provider === 'scripted' ? { ...model, decl: { provider: 'scripted' } } : model }
            : {}),
          tools: tools.map(withoutDefaults),
          declared: deps.manifest.tools.map((t) => t.id).filter((id) => !authority.grants.includes(id)),
          identity: groups.length ? identity : named,
          ticket,
          // A worker with an identity takes no decision on this run's waiting calls on a name's word.
          ...(deps.credentials ? { verifiesDecisions: true as const } : {}),
          streamKey: deps.tickets.verifyKey(),
          ...(caps ? { caps } : {}),
        };
      });
    },
  };
}
