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

export interface DecisionDeps {
  manifest: Manifest;
  /** The worker's verifier; without one no decision can be authorized here. */
  credentials?: CredentialVerifier;
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
        if (!deps.credentials)
          throw new IdentityRefused(
            'missing',
            'this worker verifies no credentials (it has no identity), so it cannot tell who decides',
          );
        const workflowId = info.workflowExecution?.workflowId ?? '';
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
        // The record says who verifiably decided; a decision naming someone else is a false claim, refused.
        if (req.by !== undefined && req.by !== v.principal)
          throw new IdentityRefused(
            'principal_mismatch',
            `the decision says it is by ${JSON.stringify(req.by)}, but its credential is ${v.principal}'s; leave by out or give the verified subject`,
          );
        // Spent last, on this one call: the same token decides nothing else, in this run or any other.
        await spendCredential(v, { kind: 'decision', effectKey: req.effectKey }, deps.credentials.tolerance);
        return { by: v.principal, issuer: v.issuer };
      });
    },
  };
}
