// Workflow-safe: how a step of the call pipeline says no. A step returns a refusal; the pipeline
// records it in the journal and ends the call with a StepError.
import type { StepErrorCode } from '../step-error';

export interface Refusal {
  refused: { code: StepErrorCode; rule: string; reason: string };
}

export function refusal(code: StepErrorCode, rule: string, reason: string): Refusal {
  return { refused: { code, rule, reason } };
}

export function isRefusal(x: object): x is Refusal {
  return 'refused' in x;
}
