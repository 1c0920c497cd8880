// Workflow-safe, step 3 of a call: where the gate asks for a person, the call waits for an
// `approve` or `deny` through the resolveEscalation update, with a deadline.
import { durationMs } from '../../catalog/duration';
import type { ToolCall } from '../../catalog/tool-call';
import { effectKey } from '../../common/effect-key';
import type { JournalEntry } from '../journal';
import type { Escalator } from '../recovery';
import { StepErrorCode } from '../step-error';
import type { Gated } from './gate';
import { refuse } from './refuse';

export async function awaitApproval(
  entry: JournalEntry,
  call: ToolCall,
  gated: Gated,
  escalator: Escalator,
): Promise<void> {
  const verdict = gated.verdict;
  if (!verdict?.askPerson) return;
  const question = verdict.allow
    ? `${call.toolId} needs a person's approval`
    : `${call.toolId} was refused (${verdict.rule}: ${verdict.reason}); a person may approve it`;
  const answer = await escalator.await({
    effectKey: effectKey({ tool: call.toolId, args: gated.args }, entry.position),
    toolId: call.toolId,
    position: entry.position,
    reason: question,
    deadline: Date.now() + durationMs(verdict.deadline ?? call.decl.escalation?.deadline ?? '24h'),
    kind: 'approval',
  });
  if (answer?.decision !== 'approve') {
    entry.decision = 'denied';
    if (answer) entry.decidedBy = answer.by ?? 'a person';
    const why = answer
      ? `denied by ${answer.by ?? 'a person'}${answer.decision === 'deny' && answer.reason ? `: ${answer.reason}` : ''}`
      : 'nobody approved it in time';
    refuse(entry, StepErrorCode.Refused, verdict.rule ?? 'approval', `${question}; ${why}`);
  }
  entry.decision = 'approved';
  entry.decidedBy = answer.by ?? 'a person';
  entry.rule = verdict.rule ?? 'approval';
  entry.reason = `${question}; approved by ${entry.decidedBy}${answer.reason ? `: ${answer.reason}` : ''}`;
}
