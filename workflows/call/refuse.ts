// Workflow-safe: how a step of the call pipeline ends a call: in the journal, then as a StepError.
import type { JournalEntry } from '../journal';
import { StepError, type StepErrorCode } from '../step-error';

export function refuse(entry: JournalEntry, code: StepErrorCode, rule: string, reason: string): never {
  if (entry.decision !== 'denied') entry.decision = 'refused';
  entry.rule = rule;
  entry.reason = reason;
  entry.outcome = 'refused';
  entry.error = { code, message: reason };
  throw new StepError(code, reason, rule);
}
