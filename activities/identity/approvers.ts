// Before a run takes a person's decision on a waiting call, it asks the worker running it (a local
// activity): is the credential the decision carries valid, is its subject a declared approver of this
// tool for this kind of decision, and is it someone other than the run's own principal? The answer,
// the verified subject, is what the run records as `decidedBy`.
import { Context } from '@temporalio/activity';
import { decisionKindOf, mayDecide } from '../../catalog/approvers';
import type { Manifest } from '../../catalog/manifest';
import type { DecisionActivities, DecisionAuthority, DecisionRequest } from '../../common/wire';
import { asFinalRefusalAsync } from '../catalog-failure';
import { IdentityRefused, type CredentialVerifier } from '../../identity/credentials';
import { spendCredential } from './credential-spend';
import type { TicketIssuer } from './tickets';

export interface DecisionDeps {
  manifest: Manifest;
  /** The worker's verifier; without one no decision can be authorized here. */
  credentials?: CredentialVerifier;
  /** The worker's ticket key: it checks an answer the MCP gateway relays from a session's principal. */
  tickets?: TicketIssuer;
}

/**
 * The verified subject as the record's `by`, once: a decision naming someone else is a false claim,
 * refused, and the token is spent last, on this one call, so it decides nothing else anywhere.
 */
async function recorded(
  credentials: CredentialVerifier,
  v: Awaited<ReturnType<CredentialVerifier['verify']>>,
  req: DecisionRequest,
  what: string,
): Promise<DecisionAuthority> {
  if (req.by !== undefined && req.by !== v.principal)
    throw new IdentityRefused(
      'principal_mismatch',
      `${what} says it is by ${JSON.stringify(req.by)}, but its credential is ${v.principal}'s; leave by out or give the verified subject`,
    );
  await spendCredential(v, { kind: 'decision', effectKey: req.effectKey }, credentials.tolerance);
  return { by: v.principal, issuer: v.issuer };
}

const isConfirmation = (decision: string): decision is 'confirm' | 'reject' =>
  decision === 'confirm' || decision === 'reject';

/**
 * A confirmation is the run's principal's own word: their credential's subject is the run's principal,
 * or the MCP gateway, which verified their bearer for the session, relays their answer under its MAC.
 */
async function authorizeConfirmation(
  deps: DecisionDeps,
  req: DecisionRequest,
  workflowId: string,
  decision: 'confirm' | 'reject',
): Promise<DecisionAuthority> {
  if (req.relay !== undefined) {
    if (!deps.tickets?.relayedConfirmation(workflowId, req.effectKey, decision, req.value, req.relay))
      throw new IdentityRefused(
        'bad_signature',
        "the relayed answer's MAC is not this worker's gateway's for this session, call, answer and value",
      );
    return { by: req.runPrincipal, issuer: 'toolplane-mcp-gateway' };
  }
  if (!deps.credentials)
    throw new IdentityRefused(
      'missing',
      'this worker verifies no credentials (it has no identity), so it cannot tell who answers',
    );
  const v = await deps.credentials.verify(req.credential, {
    workflowId,
    requireBinding: false,
    what: `the ${decision} answer`,
  });
  if (v.principal !== req.runPrincipal)
    throw new IdentityRefused(
      'not_the_principal',
      `only ${req.runPrincipal}, the principal this run acts for, confirms its values; the credential is ${v.principal}'s`,
    );
  return recorded(deps.credentials, v, req, 'the answer');
}

export function createDecisionActivities(deps: DecisionDeps): DecisionActivities {
  return {
    async authorizeDecision(req: DecisionRequest): Promise<DecisionAuthority> {
      return asFinalRefusalAsync(async () => {
        const info = Context.current().info;
        // Local only: the run it answers is the one the worker runs beside, whose pending call and
        // principal it reports. Scheduled as an activity, anyone's workflow could ask it anything.
        if (!info.isLocal)
          throw new IdentityRefused(
            'asserted',
            'authorizeDecision answers only the run it runs beside (a local activity); it was scheduled as an activity',
          );
        const workflowId = info.workflowExecution?.workflowId ?? '';
        if (isConfirmation(req.decision)) return authorizeConfirmation(deps, req, workflowId, req.decision);
        if (!deps.credentials)
          throw new IdentityRefused(
            'missing',
            'this worker verifies no credentials (it has no identity), so it cannot tell who decides',
          );
        const kind = decisionKindOf(req.decision);
        // An approver's token may be a plain one from the identity provider; one that names a workflow must name this run's.
        const v = await deps.credentials.verify(req.credential, {
          workflowId,
          requireBinding: false,
          what: `the ${kind} decision`,
        });
        const verdict = mayDecide(deps.manifest.approvers, {
          toolId: req.toolId,
          ...(req.rule !== undefined ? { rule: req.rule } : {}),
          kind,
          subject: v.principal,
          groups: v.groups,
          runPrincipal: req.runPrincipal,
        });
        if (!verdict.ok) throw new IdentityRefused(verdict.reason, verdict.message);
        return recorded(deps.credentials, v, req, 'the decision');
      });
    },
  };
}
