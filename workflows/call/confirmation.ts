// Workflow-safe, step 2b of a call: where the gate refused a value the run's principal may vouch for
// (`principal_confirms`), the call waits for the principal's `confirm` or `reject` through the
// resolveEscalation update, with the tool's escalation deadline. A yes makes the value the principal's
// words in the run's provenance, and the call is judged again; a no, or no answer, refuses it.
import { durationMs } from '../../catalog/duration';
import type { ToolCall } from '../../catalog/tool-call';
import type { EffectEvent } from '../../common/run-events';
import type { Escalator } from '../recovery';
import { StepErrorCode } from '../step-error';
import type { ConfirmAsk } from '../gate/verdict';
import type { Refusal } from './refuse';

/** The principal's answer, as the journal keeps it; anything but a yes refuses the call. */
export type ConfirmationAnswer =
  { answer: 'confirmed'; by: string } | ({ answer: 'rejected' | 'expired'; by?: string } & Refusal);

/** What a question about a value says: the tool, the field, the exact value and where it came from. */
export function confirmationQuestion(toolId: string, ask: Pick<ConfirmAsk, 'pointer' | 'value' | 'origin'>): string {
  return `${toolId} would send ${JSON.stringify(ask.value)} as ${ask.pointer}, and the plane cannot tell where it came from (${ask.origin}); does the principal vouch for it?`;
}

/** What a question about an action says: the very call, and why the plane asks. */
export function actionQuestion(toolId: string, sent: unknown, origin: string): string {
  return `${toolId} would be called with ${JSON.stringify(sent)}, and ${origin}; did the principal ask for it?`;
}

/** Where the call stands when its principal is asked. */
export interface ConfirmationAsked {
  effectKey: string;
  position: number;
  rule: string;
  /** The arguments the call sends if the principal confirms. */
  sent: unknown;
  modelCallId?: string;
  principal: string;
}

export async function askConfirmation(
  call: ToolCall,
  ask: ConfirmAsk,
  asked: ConfirmationAsked,
  escalator: Escalator,
  publish?: (event: EffectEvent) => void,
): Promise<ConfirmationAnswer> {
  const { effectKey, position, rule, sent, modelCallId } = asked;
  const question =
    ask.pointer === '' ? actionQuestion(call.toolId, sent, ask.origin) : confirmationQuestion(call.toolId, ask);
  const deadline = Date.now() + durationMs(call.decl.escalation?.deadline ?? '24h');
  const fromModel = modelCallId !== undefined ? { modelCallId } : {};
  const field = { pointer: ask.pointer, value: ask.value, origin: ask.origin };
  publish?.({
    type: 'confirmation-requested',
    position,
    toolId: call.toolId,
    effectKey,
    field,
    reason: question,
    deadline,
    ...fromModel,
  });
  const answer = await escalator.await({
    effectKey,
    toolId: call.toolId,
    position,
    reason: question,
    deadline,
    kind: 'confirmation',
    rule,
    args: sent,
    field,
    ...fromModel,
  });
  const by = answer?.by ?? asked.principal;
  publish?.({
    type: 'confirmation-decided',
    position,
    toolId: call.toolId,
    effectKey,
    decision: answer === undefined ? 'expired' : answer.decision === 'confirm' ? 'confirm' : 'reject',
    ...(answer?.by !== undefined ? { by: answer.by } : {}),
  });
  if (answer?.decision === 'confirm') return { answer: 'confirmed', by };
  const why =
    answer === undefined
      ? `nobody confirmed it by the deadline`
      : `${by} did not confirm it${answer.decision === 'reject' && answer.reason ? `: ${answer.reason}` : ''}`;
  const refused = { code: StepErrorCode.Refused, rule, reason: `${ask.origin}; ${why}` };
  return answer === undefined ? { answer: 'expired', refused } : { answer: 'rejected', by, refused };
}
