// A refusal decided by the catalogue or the identity check, carried out of an activity: final, typed by its code.
import { ApplicationFailure } from '@temporalio/activity';
import { CatalogError, ToolplaneError } from '../catalog/errors';
import { ErrorCode } from '../catalog/error-codes';

function final(err: unknown): unknown {
  if (CatalogError.is(err) || (ToolplaneError.is(err) && err.code === ErrorCode.IdentityRefused))
    return ApplicationFailure.create({
      type: err.code,
      message: err.message,
      details: [err.data],
      nonRetryable: true,
    });
  return err;
}

/** Runs `fn`; a CatalogError or IdentityRefused it throws becomes a non-retryable failure whose type is the error's code. */
export function asFinalRefusal<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    throw final(err);
  }
}

export async function asFinalRefusalAsync<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw final(err);
  }
}
