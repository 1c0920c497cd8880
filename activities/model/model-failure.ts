// How a model turn fails, as typed Temporal failures: rate limits and server errors are retried
// (after the provider's Retry-After, when it gives one); credentials and bad requests are final.
import { APICallError, AISDKError } from '@ai-sdk/provider';
import { ApplicationFailure } from '@temporalio/activity';
import { ToolplaneError } from '../../catalog/errors';
import { FINAL_MODEL_FAILURES, ModelFailureType } from '../../catalog/failure-types';

export interface ModelFailureData {
  status?: number;
  /** The delay the provider asked for before the next attempt. */
  retryAfterMs?: number;
}

export class ModelFailure extends ToolplaneError<ModelFailureType, ModelFailureData> {
  constructor(type: ModelFailureType, message: string, data: ModelFailureData = {}) {
    super(type, message, data);
  }
}

/** `Retry-After` (seconds or an HTTP date) or `retry-after-ms`, capped at an hour; undefined when absent or unreadable. */
export function retryAfterMs(headers: Record<string, string> | undefined, now = Date.now()): number | undefined {
  if (!headers) return undefined;
  const get = (name: string) => Object.entries(headers).find(([k]) => k.toLowerCase() === name)?.[1];
  const cap = (ms: number) => Math.min(Math.max(0, Math.ceil(ms)), 3_600_000);
  const ms = Number(get('retry-after-ms'));
  if (get('retry-after-ms') !== undefined && Number.isFinite(ms)) return cap(ms);
  const after = get('retry-after')?.trim();
  if (!after) return undefined;
  if (/^\d+(\.\d+)?$/.test(after)) return cap(Number(after) * 1000);
  const date = Date.parse(after);
  return Number.isNaN(date) ? undefined : cap(date - now);
}

/** Classifies what a provider threw. `where` names the endpoint and model for the message. */
export function classifyModelError(err: unknown, where: string): ModelFailure {
  if (err instanceof ModelFailure) return err;
  if (APICallError.isInstance(err)) {
    const status = err.statusCode;
    const body = err.responseBody ? `: ${err.responseBody.slice(0, 300)}` : '';
    if (status === undefined)
      return new ModelFailure(ModelFailureType.Unavailable, `cannot reach ${where}: ${err.message}`);
    if (status >= 200 && status < 300)
      return new ModelFailure(
        ModelFailureType.ResponseMalformed,
        `${where} answered ${status} with something that is not a model response (${err.message})${body}`,
        { status },
      );
    if (status === 401 || status === 403)
      return new ModelFailure(ModelFailureType.Auth, `${where} refused the worker's credentials (${status})${body}`, {
        status,
      });
    if (status === 429)
      return new ModelFailure(ModelFailureType.RateLimited, `${where} is rate limiting (429)${body}`, {
        status,
        retryAfterMs: retryAfterMs(err.responseHeaders),
      });
    if (status >= 500 || status === 408 || status === 409)
      return new ModelFailure(ModelFailureType.Unavailable, `${where} answered ${status}${body}`, {
        status,
        retryAfterMs: retryAfterMs(err.responseHeaders),
      });
    return new ModelFailure(ModelFailureType.RequestInvalid, `${where} rejected the request (${status})${body}`, {
      status,
    });
  }
  if (AISDKError.isInstance(err))
    // JSON that does not parse or does not match the provider's schema, an empty body, an unknown finish.
    return new ModelFailure(
      ModelFailureType.ResponseMalformed,
      `${where} answered something that is not a model response: ${err.message}`,
    );
  const e = err as Error;
  return new ModelFailure(ModelFailureType.Unavailable, `cannot reach ${where}: ${e?.message ?? String(err)}`);
}

/** The Temporal failure for a model failure: final or not by type, with the provider's delay as `nextRetryDelay`. */
export function toApplicationFailure(f: ModelFailure): ApplicationFailure {
  return ApplicationFailure.create({
    type: f.code,
    message: f.message,
    nonRetryable: FINAL_MODEL_FAILURES.includes(f.code),
    details: [f.data ?? {}],
    ...(f.data?.retryAfterMs !== undefined ? { nextRetryDelay: f.data.retryAfterMs } : {}),
  });
}
