// The first activity of every run: the worker answers what the run may hold. Recorded in history,
// so replay sees the same answer.
import { ApplicationFailure } from '@temporalio/activity';
import {
  authorize,
  resolveModel,
  RunRefused,
  RunRefusedReason,
  type ModelRequest,
  type RunAuthority,
  type RunRequest,
} from '../catalog/authority';
import { manifestDigest } from '../catalog/digest';
import { CatalogError } from '../catalog/errors';
import type { Manifest } from '../catalog/manifest';

export interface AuthorizeRequest extends RunRequest {
  /** The model endpoint an agent run names; refused here, before any request, when undeclared. */
  model?: ModelRequest;
  /** A run without the data-flow gate (`toolRun`) asks to be served; only a worker configured for it agrees. */
  ungoverned?: boolean;
}

/** The run's authority, with the worker's manifest: a run reaches only what this worker declares. */
export interface AuthorizeResult extends RunAuthority {
  manifest: Manifest;
}

export interface AuthorizeDeps {
  manifest: Manifest;
  /** Serve `toolRun`, which has no data-flow gate (tests, internals). Off unless configured. */
  allowUngovernedToolRun?: boolean;
}

export function createAuthorizeActivities(deps: AuthorizeDeps) {
  const digest = manifestDigest(deps.manifest);
  return {
    async authorizeRun(req: AuthorizeRequest): Promise<AuthorizeResult> {
      try {
        if (req.ungoverned && !deps.allowUngovernedToolRun) {
          throw new RunRefused(
            RunRefusedReason.Ungoverned,
            ['toolRun'],
            'this worker does not serve toolRun, which has no data-flow gate; start agentRun, or configure the worker with allowUngovernedToolRun',
          );
        }
        if (req.model) resolveModel(deps.manifest.models, req.model);
        return { ...authorize(deps.manifest, digest, req), manifest: deps.manifest };
      } catch (err) {
        if (CatalogError.is(err))
          throw ApplicationFailure.create({
            type: err.code,
            message: err.message,
            details: [err.data],
            nonRetryable: true,
          });
        throw err;
      }
    },
  };
}

export type AuthorizeActivities = ReturnType<typeof createAuthorizeActivities>;
