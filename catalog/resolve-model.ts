// Workflow-safe: the endpoint a run's model request names, among those the worker declares.
import { CatalogError, CatalogErrorCode } from './errors';
import type { ModelRequest } from './model-request';
import { DEFAULT_MODELS, type ModelEndpointDecl, type ModelsDecl, type ProviderEndpointDecl } from './models-decl';

export class ModelRefused extends CatalogError<{ endpoint: string; model?: string }> {
  constructor(message: string, data: { endpoint: string; model?: string }) {
    super(CatalogErrorCode.ModelRefused, message, data);
  }
}

export type ResolvedModel =
  | { endpoint: string; decl: ProviderEndpointDecl; model: string }
  | { endpoint: string; decl: Extract<ModelEndpointDecl, { provider: 'scripted' }>; model: string };

const MODEL_REQUEST_KEYS = ['endpoint', 'model', 'temperature', 'script', 'name'];

/** Finds the endpoint a run names. Anything else a run says about a model (a URL, a key variable) is refused. */
export function resolveModel(models: ModelsDecl | undefined, request: ModelRequest): ResolvedModel {
  const asked = request as unknown as Record<string, unknown>;
  const extra = Object.keys(asked).filter((k) => !MODEL_REQUEST_KEYS.includes(k));
  if (extra.length > 0 || typeof asked.endpoint !== 'string') {
    throw new ModelRefused(
      `a run names a model endpoint the worker declares ({ endpoint, model? }); it may not set ${extra.length ? extra.join(', ') : 'an endpoint other than by name'}`,
      { endpoint: String(asked.endpoint ?? asked.provider ?? '') },
    );
  }
  const table = models ?? DEFAULT_MODELS;
  const decl = Object.prototype.hasOwnProperty.call(table, request.endpoint) ? table[request.endpoint] : undefined;
  if (!decl) {
    throw new ModelRefused(
      `model endpoint "${request.endpoint}" is not declared by this worker (declared: ${Object.keys(table).join(', ')})`,
      { endpoint: request.endpoint },
    );
  }
  if (decl.provider === 'scripted') {
    if (decl.script && request.script) {
      throw new ModelRefused(
        `model endpoint "${request.endpoint}" plays the script this worker declares; a run may not send its own`,
        { endpoint: request.endpoint },
      );
    }
    return { endpoint: request.endpoint, decl, model: request.name ?? 'scripted' };
  }
  const model = request.model ?? decl.models[0]!;
  if (!decl.models.includes(model)) {
    throw new ModelRefused(
      `model endpoint "${request.endpoint}" does not serve "${model}" (declared: ${decl.models.join(', ')})`,
      { endpoint: request.endpoint, model },
    );
  }
  return { endpoint: request.endpoint, decl, model };
}
