// A credential acts once. The worker spends each credential it accepts in Temporal itself, where
// every worker of the namespace sees it: a record workflow under an id derived from the token alone,
// started on a task queue no worker polls and open until the token expires. A second start under
// that id fails for as long as the token could verify (and after, by the id's reuse policy), so a
// token read from a history starts no second run and decides no second call, whichever worker is
// asked, after any restart. The same use asked again (the activity retried, the run reset to its
// start) presents the same start request id, which Temporal answers with the record it already holds.
import { createHash } from 'node:crypto';
import { Context } from '@temporalio/activity';
import { isGrpcServiceError, type Client } from '@temporalio/client';
import { defaultPayloadConverter, encodeWorkflowIdReusePolicy } from '@temporalio/common';
import Long from 'long';
import {
  SPENT_CREDENTIAL_TYPE,
  SPENT_CREDENTIALS_QUEUE,
  spentCredentialWorkflowId,
} from '../../common/credential-spend-id';
import { IdentityRefused, type VerifiedCredential } from '../../identity/credentials';
import type { RunIds } from './tickets';

/** What a credential is spent on: starting the run the activity answers, or deciding one of its waiting calls. */
export type CredentialUse = { kind: 'run' } | { kind: 'decision'; effectKey: string };

/** gRPC's ALREADY_EXISTS: Temporal's answer to a start under an id it holds (or rejects by reuse policy). */
const ALREADY_EXISTS = 6;

/** The record outlives the token's `exp` plus the tolerance by this margin, so no clock reads it closed early. */
const MARGIN_SECONDS = 60;

function describeUse(use: CredentialUse, workflowId: string): string {
  return use.kind === 'run'
    ? `starting run ${workflowId}`
    : `deciding the call under ${use.effectKey} in run ${workflowId}`;
}

/**
 * The run a chain of runs started as: a reset or a continued run keeps its first run's id, which
 * Temporal writes in the run's first event. Read from the server, never from the request.
 */
async function firstRunIdOf(client: Client, run: RunIds): Promise<string> {
  const { history } = await client.workflowService.getWorkflowExecutionHistory({
    namespace: client.options.namespace,
    execution: { workflowId: run.workflowId, runId: run.runId },
    maximumPageSize: 1,
  });
  const started = history?.events?.[0]?.workflowExecutionStartedEventAttributes;
  return started?.firstExecutionRunId || run.runId;
}

/**
 * Spends `credential` on `use` in the run this (local) activity answers, as Temporal reports that run,
 * or refuses it (`replayed`) when it was spent on anything else. `tolerance` is the verifier's clock skew, in seconds.
 */
export async function spendCredential(
  credential: VerifiedCredential,
  use: CredentialUse,
  tolerance: number,
): Promise<void> {
  const { client, info } = Context.current();
  const run = { workflowId: info.workflowExecution?.workflowId ?? '', runId: info.workflowExecution?.runId ?? '' };
  const firstRunId = await firstRunIdOf(client, run);
  const { digest, expiresAt } = credential.spend;
  const openFor = Math.max(1, Math.ceil(expiresAt + tolerance + MARGIN_SECONDS - Date.now() / 1000));
  const useKey = [use.kind, run.workflowId, firstRunId, ...(use.kind === 'decision' ? [use.effectKey] : [])];
  const described = describeUse(use, run.workflowId);
  try {
    await client.workflowService.startWorkflowExecution({
      namespace: client.options.namespace,
      workflowId: spentCredentialWorkflowId(digest),
      workflowType: { name: SPENT_CREDENTIAL_TYPE },
      taskQueue: { name: SPENT_CREDENTIALS_QUEUE },
      identity: client.options.identity,
      // The same use asks with the same request id: Temporal answers with the record it started then.
      requestId: createHash('sha256')
        .update(JSON.stringify([digest, ...useKey]))
        .digest('hex'),
      // Even a closed record refuses the token again, for as long as the namespace keeps it.
      workflowIdReusePolicy: encodeWorkflowIdReusePolicy('REJECT_DUPLICATE'),
      workflowExecutionTimeout: { seconds: Long.fromNumber(openFor) },
      userMetadata: {
        summary: defaultPayloadConverter.toPayload(
          `${credential.principal}'s credential from ${credential.issuer}, spent ${described}`,
        ),
      },
    });
  } catch (err) {
    if (isGrpcServiceError(err) && Number(err.code) === ALREADY_EXISTS)
      throw new IdentityRefused(
        'replayed',
        `this credential of ${credential.principal} was already used, so it cannot be used for ${described}: ` +
          'a credential starts exactly one run or decides exactly one call (one read from a history acts no more); sign a new one',
      );
    throw err;
  }
}
