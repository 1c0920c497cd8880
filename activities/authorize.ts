// The first activity of every run: the worker answers what the run may hold. Recorded in history,
// so replay sees the same answer.
import {
  authorize,
  resolveModel,
  RunRefused,
  RunRefusedReason,
  type ModelRequest,
  type ResolvedModel,
  type RunAuthority,
  type RunRequest,
} from '../catalog/authority';
import { manifestDigest } from '../catalog/digest';
import type { Manifest, ToolDecl } from '../catalog/manifest';
import { asFinalRefusal } from './catalog-failure';

export interface AuthorizeRequest extends RunRequest {
  /** The model endpoint an agent run names; refused here, before any request, when undeclared. */
  model?: ModelRequest;
  /** A run without the data-flow gate (`toolRun`) asks to be served; only a worker configured for it agrees. */
  ungoverned?: boolean;
}

/**
 * The run's authority, with the declarations of exactly the tools it holds: a run reaches only
 * what this worker declares, and its history does not grow with the size of the manifest.
 */
export interface AuthorizeResult extends RunAuthority {
  /** The granted tools' declarations, as the worker's manifest has them. */
  tools: ToolDecl[];
  /** Every tool the manifest declares, by identity: an ungranted one is refused as such, not as unknown. */
  declared: string[];
  /** The endpoint the run's model turns go to, as the worker declares it (a key variable's name, never its value). */
  model?: ResolvedModel;
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

export type AuthorizeActivities = ReturnType<typeof createAuthorizeActivities>;
