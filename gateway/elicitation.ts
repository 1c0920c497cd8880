// The principal's confirmation as an MCP elicitation, on both revisions: the question as a form (a yes
// or a no on the exact value, or on the very call for an action that must be asked for), and the answer
// read back. 2026-07-28 carries it in an `input_required` result and the retried call; 2025-11-25 sends
// `elicitation/create` on the call's own response stream, to a client that declared elicitation at
// initialize, and the client's response comes back in a POST of its own (http.ts).
import type { ConfirmationQuestion } from '../common/gateway-protocol';

/** The id of the one input a confirmation asks for (2026-07-28 `inputRequests`). */
export const CONFIRM_INPUT = 'toolplane-confirm';

/** `elicitation/create`'s params for the question. */
export function confirmationElicitationParams(q: ConfirmationQuestion) {
  const action = q.pointer === '';
  return {
    mode: 'form' as const,
    message: action
      ? `Did you ask for this call of ${String(q.value)}, with the arguments this request sends? ${q.origin}.`
      : `Do you vouch for ${JSON.stringify(q.value)} as ${q.pointer}? The plane cannot tell where it came from: ${q.origin}.`,
    requestedSchema: {
      type: 'object' as const,
      properties: {
        confirm: {
          type: 'boolean' as const,
          title: action ? `Call ${String(q.value)}` : `Send ${String(q.value)}`,
          description: 'Yes only if you gave this value or know it is right; no refuses the call.',
        },
      },
      required: ['confirm'],
    },
  };
}

/** The question as a form elicitation request. */
export function confirmationElicitation(q: ConfirmationQuestion) {
  return { method: 'elicitation/create' as const, params: confirmationElicitationParams(q) };
}

/** What an elicitation's result says: a yes only for `accept` with `confirm: true`; `cancel` is no answer. */
export function elicitedDecision(
  result: { action?: unknown; content?: unknown } | undefined,
): 'confirm' | 'reject' | undefined {
  if (!result || result.action === 'cancel') return undefined;
  const content = result.content as { confirm?: unknown } | undefined;
  return result.action === 'accept' && content?.confirm === true ? 'confirm' : 'reject';
}
