// Workflow-safe: how a run opens. The worker's authorizeRun (a local activity) decides what the run
// may reach and hold; the run labels itself with the principal and manifest it acts under.
import type { SearchAttributePair } from '@temporalio/common';
import {
  ActivityFailure,
  ApplicationFailure,
  proxyLocalActivities,
  upsertMemo,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { AuthorizeActivities, AuthorizeRequest, CarriedAuthority } from '../../common/wire';
import type { TicketCarry } from '../../common/ticket';
import { readAuthority, type ReadAuthority } from '../../common/authorize-answer';
import { CatalogErrorCode } from '../../catalog/errors';
import { MANIFEST_DIGEST, PRINCIPAL } from '../../common/search-attributes';
import { ALLOW_ALL, type Policy } from '../../catalog/policy';
import { ToolCatalog } from '../../catalog/tool-catalog';
import { RunFailureType } from '../../catalog/failure-types';
import type { RunScope } from '../step-ctx';

/** The failure type of a run whose credential (or carried ticket) the worker refused. */
export const IDENTITY_REFUSED = RunFailureType.IdentityRefused;

/**
 * The openings this run has had. Module state is the run's own (the SDK isolates a workflow's modules),
 * and it grows the same way on replay. The first opening's calls leave their principal out: the worker
 * takes it from that opening, in the run's history.
 */
let openings = 0;

/** The worker answers on the worker running the workflow task: no round trip before the first call. */
const { authorizeRun } = proxyLocalActivities<AuthorizeActivities>({
  startToCloseTimeout: '30s',
  retry: {
    maximumAttempts: 5,
    nonRetryableErrorTypes: [CatalogErrorCode.RunRefused, CatalogErrorCode.ModelRefused, IDENTITY_REFUSED],
  },
});

/** Whose ticket a run carries: the run it continues, else its parent. */
function carriedFrom(carry: TicketCarry): CarriedAuthority {
  const info = workflowInfo();
  if (info.continuedFromExecutionRunId)
    return { from: 'continued', workflowId: info.workflowId, runId: info.continuedFromExecutionRunId, carry };
  return { from: 'parent', workflowId: info.parent?.workflowId ?? '', runId: info.parent?.runId ?? '', carry };
}

/**
 * Labels the run with the principal the worker established (verified, or asserted where the worker
 * allows it) and the manifest it is governed by: the ToolplanePrincipal every run that opened a StepCtx
 * carries, whatever its workflow type, and which `toolplane list` selects by. Written by the run, never
 * taken from the client that started it: a run the worker refused carries the principal it asked for,
 * or `unverified:<name>` when its identity was refused. Upserted only where the run does not already
 * carry these values (a continued chain), so such a run spends no event on it.
 */
function labelRun(principal: string, manifestDigest: string | undefined): void {
  const carried = workflowInfo().typedSearchAttributes;
  const changed: SearchAttributePair[] = [];
  if (carried.get(PRINCIPAL) !== principal) changed.push({ key: PRINCIPAL, value: principal });
  if (manifestDigest && carried.get(MANIFEST_DIGEST) !== manifestDigest)
    changed.push({ key: MANIFEST_DIGEST, value: manifestDigest });
  if (changed.length > 0) upsertSearchAttributes(changed);
}

/**
 * Who decides a run's calls when the caller passes no manifest gate of its own: toolRun, which the
 * worker agreed to serve without a gate (`none`); a delegated child, whose call its parent's gate
 * decided (the worker checked the parent's ticket and ids: `parent`); else the manifest, on every call.
 */
export type Decider = 'manifest' | 'parent' | 'none';

/** What the worker granted a run, and who decides its calls. */
export interface Authorized {
  scope: RunScope;
  decider: Decider;
}

/** The worker's refusal as the run's failure, the run listed under the principal it asked for. */
function refused(err: unknown, asking: string | undefined): never {
  // Refused (the worker's final answer, as the local activity's own failure or an activity's cause):
  // listed under the principal it asked for, as a refused attempt to act for it.
  const refusal = err instanceof ActivityFailure ? err.cause : err;
  // A run whose identity the worker refused is listed as unverified, never as the principal it named.
  if (refusal instanceof ApplicationFailure && refusal.nonRetryable && asking)
    labelRun(refusal.type === IDENTITY_REFUSED ? `unverified:${asking}` : asking, undefined);
  const cause = err instanceof ActivityFailure ? err.cause : undefined;
  if (cause instanceof ApplicationFailure && cause.nonRetryable)
    throw ApplicationFailure.nonRetryable(cause.message, cause.type ?? undefined);
  throw err;
}

function scopeOf(read: ReadAuthority, policy: Policy | undefined, asked: readonly string[] | undefined): RunScope {
  const authority = read.answer;
  const requested = asked?.filter((id) => read.grants.includes(id));
  return {
    ...(requested?.length ? { requested } : {}),
    catalog: ToolCatalog.fromGranted(read.tools, authority.declared),
    principal: read.principal,
    identity: read.identity,
    ticket: read.ticket,
    grants: read.grants,
    policy: policy ?? ALLOW_ALL,
    capabilities: read.capabilities,
    manifestDigest: read.manifestDigest,
    verifiesDecisions: authority.verifiesDecisions === true,
    ...(authority.streamKey !== undefined ? { streamKey: authority.streamKey } : {}),
    ...(authority.caps ? { caps: authority.caps } : {}),
  };
}

/**
 * Asks the worker what this run may reach and hold (its manifest and the principal's grants), by a
 * credential or by the ticket `carry` of the run it continues or its parent. A request for what the
 * worker does not declare fails the run with a non-retryable `RunRefused` or `ModelRefused`.
 */
export async function authorize(
  asked: Omit<AuthorizeRequest, 'carried'>,
  carry: TicketCarry | undefined,
  policy: Policy | undefined,
): Promise<Authorized> {
  const carried = carry ? carriedFrom(carry) : undefined;
  const ask: AuthorizeRequest = carried ? { ...asked, carried } : asked;
  const asking = asked.principal ?? carry?.identity.principal;
  let authority;
  try {
    authority = await authorizeRun.executeWithOptions({ summary: `authorize ${asking ?? 'by credential'}` }, [ask]);
  } catch (err) {
    refused(err, asking);
  }
  const read = readAuthority(authority, ask.manifestDigest);
  const first = openings++ === 0;
  labelRun(read.principal, read.manifestDigest);
  if (read.withheld.grants.length || read.withheld.capabilities.length)
    upsertMemo({ toolplaneWithheld: read.withheld });
  const decider: Decider = asked.ungoverned ? 'none' : carried?.from === 'parent' ? 'parent' : 'manifest';
  return { scope: { ...scopeOf(read, policy, asked.grants), ...(first ? { firstOpening: true } : {}) }, decider };
}
