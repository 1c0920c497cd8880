// toolplane/ai-sdk as a consumer sees it: governed AI SDK tools for a workflow that runs `generateText`
// with @temporalio/ai-sdk (whose AiSdkPlugin such a worker adds; this consumer's worker does not bundle it).
import { governedTools, type GovernedTools, type RefusedToolResult } from 'toolplane/ai-sdk';
import type { StepCtx } from 'toolplane/workflow';

export function toolsFor(step: StepCtx, prompt: string): GovernedTools['tools'] {
  return governedTools(step, { prompt, limits: { maxToolCalls: 10 } }).tools;
}

export type Refusal = RefusedToolResult;
