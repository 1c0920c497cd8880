// Worker side: the AI SDK provider a toolplane worker gives @temporalio/ai-sdk's plugin
// (`new AiSdkPlugin({ modelProvider: plugin.modelProvider() })`). The plugin's `invokeModel` activity
// receives only `{ modelId, options }` and calls `provider.languageModel(modelId).doGenerate(options)`
// inside the activity; so the check is made there, per call: the model id names an endpoint the
// manifest declares (`<endpoint>/<model>`), and the call's `providerOptions.toolplane` carries the
// principal and the MAC of the run's ticket for `model:<endpoint>`, checked against the activity's own
// run as Temporal reports it. Anything else is refused (`ModelRefused`) before a request is sent.
import type {
  EmbeddingModelV4,
  ImageModelV4,
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4StreamPart,
  LanguageModelV4StreamResult,
  ProviderV4,
  SharedV4ProviderOptions,
} from '@ai-sdk/provider';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { DEFAULT_MODELS, resolveModel, type ModelsDecl, type ResolvedModel } from '../../catalog/authority';
import { CatalogErrorCode, ToolplaneError } from '../../catalog/errors';
import { MODEL_TICKET_OPTIONS, modelPermit } from '../../common/ticket';
import { asFinalRefusal } from '../catalog-failure';
import { checkTicket } from '../identity/ticket-check';
import type { TicketIssuer } from '../identity/tickets';
import { ModelFailure, toApplicationFailure } from './model-failure';
import { languageModelFor } from './providers';
import { TokenPublisher } from './token-stream';
import { ErrorCode } from '../../catalog/error-codes';

export interface GovernedProviderDeps {
  /** The manifest's `models`. */
  models?: ModelsDecl;
  tickets: TicketIssuer;
  /**
   * Providers the worker supplies for some of its declared endpoints, by endpoint name: a `scripted`
   * endpoint (tests, the demo) or a provider toolplane does not build itself. Never taken from a run.
   */
  providers?: Readonly<Record<string, ProviderV4>>;
}

const refused = (message: string, endpoint: string) =>
  ApplicationFailure.create({
    type: CatalogErrorCode.ModelRefused,
    message,
    details: [{ endpoint }],
    nonRetryable: true,
  });

/** `<endpoint>/<model>` (the model may hold more slashes) or `<endpoint>` (its first declared model). */
export function splitModelId(modelId: string): { endpoint: string; model?: string } {
  const slash = modelId.indexOf('/');
  return slash < 0 ? { endpoint: modelId } : { endpoint: modelId.slice(0, slash), model: modelId.slice(slash + 1) };
}

/** The principal and MAC a call carries; the rest of its provider options go on to the endpoint. */
function ticketOf(providerOptions: SharedV4ProviderOptions | undefined): {
  presented: { principal?: string; ticket?: string };
  others: SharedV4ProviderOptions;
} {
  const { [MODEL_TICKET_OPTIONS]: ours, ...others } = providerOptions ?? {};
  const principal = typeof ours?.principal === 'string' ? ours.principal : undefined;
  const ticket = typeof ours?.ticket === 'string' ? ours.ticket : undefined;
  return { presented: { principal, ticket }, others };
}

/**
 * The worker's check of one model call on the AI SDK path, inside its activity: the run's ticket for
 * `model:<endpoint>`, then the manifest's declaration of the endpoint and model. Throws `ModelRefused`.
 */
export async function checkModelCall(
  deps: Pick<GovernedProviderDeps, 'models' | 'tickets'>,
  modelId: string,
  providerOptions: SharedV4ProviderOptions | undefined,
): Promise<{ resolved: ResolvedModel; others: SharedV4ProviderOptions }> {
  const { endpoint, model } = splitModelId(modelId);
  const { presented, others } = ticketOf(providerOptions);
  await checkTicket(deps.tickets, presented, modelPermit(endpoint), CatalogErrorCode.ModelRefused);
  const resolved = asFinalRefusal(() =>
    resolveModel(deps.models, { endpoint, ...(model !== undefined ? { model } : {}) }),
  );
  return { resolved, others };
}

/** The @temporalio/ai-sdk activities that reach a model, and where each carries its provider options. */
const MODEL_ACTIVITIES: Readonly<Record<string, (arg: Record<string, unknown>) => unknown>> = {
  invokeModel: (a) => (a.options as { providerOptions?: unknown } | undefined)?.providerOptions,
  invokeModelStreaming: (a) => (a.options as { providerOptions?: unknown } | undefined)?.providerOptions,
  invokeEmbeddingModel: (a) => a.providerOptions,
};

/**
 * Toolplane's guard on a worker that also runs @temporalio/ai-sdk's plugin: whatever provider that
 * plugin was given, its model activities run only for a call that passes `checkModelCall` (a worker
 * wired with a provider of its own, not `modelProvider()`, still reaches no endpoint for a run
 * without the permit, nor one outside the manifest).
 */
export function aiSdkModelGuard(deps: Pick<GovernedProviderDeps, 'models' | 'tickets'>): ActivityInterceptorsFactory {
  return (ctx) => ({
    inbound: {
      async execute(input, next) {
        const where = Object.prototype.hasOwnProperty.call(MODEL_ACTIVITIES, ctx.info.activityType)
          ? MODEL_ACTIVITIES[ctx.info.activityType]
          : undefined;
        if (where) {
          const arg = (input.args[0] ?? {}) as Record<string, unknown>;
          await checkModelCall(
            deps,
            typeof arg.modelId === 'string' ? arg.modelId : '',
            where(arg) as SharedV4ProviderOptions | undefined,
          );
        }
        return next(input);
      },
    },
  });
}

/**
 * The streamed call's text, also published into the run's stream as toolplane's `tokens` events (what
 * `streamRun` reads), keyed by the activity: a retried attempt publishes from index 0 again.
 */
function tokensToRun(
  started: LanguageModelV4StreamResult,
  signer: Pick<TicketIssuer, 'signStreamBatch'>,
): LanguageModelV4StreamResult {
  const info = Context.current().info;
  const tokens = TokenPublisher.forTurn(`call-${info.workflowExecution?.runId ?? ''}/${info.activityId}`, signer);
  const reader = started.stream.getReader();
  const stream = new ReadableStream<LanguageModelV4StreamPart>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          await tokens.close();
          controller.close();
          return;
        }
        if (value.type === 'text-delta') tokens.push(value.delta);
        controller.enqueue(value);
      } catch (err) {
        tokens.abandon();
        controller.error(err);
      }
    },
    cancel(reason) {
      tokens.abandon();
      return reader.cancel(reason);
    },
  });
  return { ...started, stream };
}

/**
 * An AI SDK provider over the worker's declared endpoints, for @temporalio/ai-sdk's plugin. Each call
 * is checked inside the model activity against the run's ticket; only then is the endpoint's provider
 * built (its key read from the worker's environment) and the request sent.
 */
export function governedModelProvider(deps: GovernedProviderDeps): ProviderV4 {
  for (const name of Object.keys(deps.providers ?? {}))
    if (!Object.prototype.hasOwnProperty.call(deps.models ?? DEFAULT_MODELS, name))
      throw new ToolplaneError(
        ErrorCode.UsageError,
        `the worker supplies a provider for model endpoint "${name}", which its manifest does not declare`,
      );

  /** Checks the call and finds the model that answers it; throws a typed refusal otherwise. */
  const admit = async (modelId: string, options: LanguageModelV4CallOptions) => {
    const { resolved, others } = await checkModelCall(deps, modelId, options.providerOptions);
    const { endpoint } = resolved;
    const rest: LanguageModelV4CallOptions = { ...options, providerOptions: others };
    const own = deps.providers && Object.prototype.hasOwnProperty.call(deps.providers, endpoint);
    if (own) return { inner: deps.providers![endpoint]!.languageModel(resolved.model), rest };
    if (resolved.decl.provider === 'scripted')
      throw refused(
        `model endpoint "${endpoint}" is scripted; on the AI SDK path the worker serves it only with a provider it supplies (modelProvider({ providers }))`,
        endpoint,
      );
    try {
      return { inner: await languageModelFor(endpoint, resolved.decl, resolved.model), rest };
    } catch (err) {
      throw err instanceof ModelFailure ? toApplicationFailure(err) : err;
    }
  };

  const languageModel = (modelId: string): LanguageModelV4 => ({
    specificationVersion: 'v4',
    provider: 'toolplane',
    modelId,
    supportedUrls: {},
    async doGenerate(options) {
      const { inner, rest } = await admit(modelId, options);
      return inner.doGenerate(rest);
    },
    async doStream(options) {
      const { inner, rest } = await admit(modelId, options);
      return tokensToRun(await inner.doStream(rest), deps.tickets);
    },
  });

  const unsupported = (kind: string, modelId: string): never => {
    throw refused(
      `${kind} "${modelId}" refused: this worker's endpoints serve language models only, each call under the run's ticket`,
      splitModelId(modelId).endpoint,
    );
  };
  return {
    specificationVersion: 'v4',
    languageModel,
    embeddingModel: (modelId: string): EmbeddingModelV4 => unsupported('embedding model', modelId),
    imageModel: (modelId: string): ImageModelV4 => unsupported('image model', modelId),
  };
}
