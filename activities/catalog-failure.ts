// A refusal decided by the catalogue, carried out of an activity: final, typed by its code.
import { ApplicationFailure } from '@temporalio/activity';
import { CatalogError } from '../catalog/errors';

/** Runs `fn`; a CatalogError it throws becomes a non-retryable failure whose type is the error's code. */
export function asFinalRefusal<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (CatalogError.is(err)) {
      throw ApplicationFailure.create({
        type: err.code,
        message: err.message,
        details: [err.data],
        nonRetryable: true,
      });
    }
    throw err;
  }
}
