// The first activity of every run: the worker answers what the run may hold. Recorded in history,
// so replay sees the same answer.
import { authorize, resolveModel, RunRefused, RunRefusedReason } from '../catalog/authority';
import { manifestDigest } from '../catalog/digest';
import type { Manifest } from '../catalog/manifest';
import { asFinalRefusal } from './catalog-failure';
import type { AuthorizeActivities, AuthorizeRequest, AuthorizeResult } from '../common/wire';

export interface AuthorizeDeps {
  manifest: Manifest;
  /** Serve `toolRun`, which has no data-flow gate (tests, internals). Off unless configured. */
  allowUngovernedToolRun?: boolean;
}

export function createAuthorizeActivities(deps: AuthorizeDeps): AuthorizeActivities {
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
        const model = req.model ? resolveModel(deps.manifest.models, req.model) : undefined;
        const authority = authorize(deps.manifest, digest, req);
        return {
          ...authority,
          // Which endpoint and model answer, for the record; a script the worker plays stays on the worker.
          ...(model
            ? { model: model.decl.provider === 'scripted' ? { ...model, decl: { provider: 'scripted' } } : model }
            : {}),
          tools: deps.manifest.tools.filter((t) => authority.grants.includes(t.id)),
          declared: deps.manifest.tools.map((t) => t.id),
        };
      });
    },
  };
}
