// Workflow-safe, shared by whoever mints a run's credential, the run's workflow and the worker: what
// binds a run's credential to the input it was issued for (issue 46.2, the start race). A token bound
// to a workflow id alone lets whoever reads the run's start event terminate-start that id, before the
// run's first task spends the token, with input of their own. Bound to the run's input too, the token
// starts only the run it was issued for: the worker compares the token's `toolplane_input` claim with
// the binding of the workflow type Temporal reports and the digest of the input the run itself sent.
import { canonicalJson, sha256Hex } from '../catalog/digest';

/** The claim a run's credential names the binding of its input in. */
export const INPUT_BINDING_CLAIM = 'toolplane_input';

/** The digest of a run's input as its credential binds it: canonical JSON, without the credential itself. */
export function runInputDigest(input: unknown): string {
  let bound = input ?? null;
  if (typeof bound === 'object' && bound !== null && !Array.isArray(bound) && 'credential' in bound) {
    const { credential: _credential, ...rest } = bound as Record<string, unknown>;
    bound = rest;
  }
  return sha256Hex(canonicalJson(bound));
}

/** The claim's value for a run of `workflowType` whose input has digest `inputDigest` (none: the run binds only its type). */
export function inputBindingOf(workflowType: string, inputDigest: string | undefined): string {
  return sha256Hex(canonicalJson(['toolplane-run-input', workflowType, inputDigest ?? null]));
}

/**
 * The `toolplane_input` claim for a run of `workflowType` started with `input` (its `credential` field,
 * if any, is left out): what `signCredential({ runInput })` writes. A workflow of your own binds what it
 * passes as `StepCtx.open({ input })`; one that passes none binds its type alone (`input` undefined).
 */
export function runInputBinding(workflowType: string, input?: unknown): string {
  return inputBindingOf(workflowType, input === undefined ? undefined : runInputDigest(input));
}

/** Why a run's token (its `toolplane_input` claim `claimed`) may not start this run, or undefined. */
export function inputBindingRefusal(
  claimed: unknown,
  expected: string,
  opts: { required: boolean; what: string },
): string | undefined {
  if (claimed === undefined)
    return opts.required
      ? `${opts.what}'s credential names no input (${INPUT_BINDING_CLAIM}); this worker accepts only tokens bound to the input of the run they start`
      : undefined;
  if (claimed !== expected)
    return `${opts.what}'s credential was issued for another input (or another workflow type) than this run's; nothing of this run was started`;
  return undefined;
}
