// The first activity of every run: the worker answers what the run may hold. Recorded in history,
// so replay sees the same answer.
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
import type { Manifest } from '../catalog/manifest';
import { asFinalRefusal } from './catalog-failure';

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
      return asFinalRefusal(() => {
        if (req.ungoverned && !deps.allowUngovernedToolRun) {
          throw new RunRefused(
            RunRefusedReason.Ungoverned,
            ['toolRun'],
            'this worker does not serve toolRun, which has no data-flow gate; start agentRun, or configure the worker with allowUngovernedToolRun',
          );
        }
        if (req.model) resolveModel(deps.manifest.models, req.model);
        return { ...authorize(deps.manifest, digest, req), manifest: deps.manifest };
      });
    },
  };
}

export type AuthorizeActivities = ReturnType<typeof createAuthorizeActivities>;
