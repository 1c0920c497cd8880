// toolplane/ai-sdk as a consumer sees it: governed AI SDK tools for a workflow that runs `generateText`
// with @temporalio/ai-sdk (whose AiSdkPlugin such a worker adds; this consumer's worker does not bundle it).
import { stepCountIs } from 'ai';
import { governedTools, type GovernedTools, type RefusedToolResult } from 'toolplane/ai-sdk';
import type { StepCtx } from 'toolplane/workflow';

/**
 * When such a workflow's `generateText` stops. A value imported from `ai` itself, which ships ES modules
 * only: this project's CommonJS build takes it with `module: nodenext` (tsconfig.json); `node16` refuses it (TS1479).
 */
export const stopWhen = stepCountIs(12);

export function toolsFor(step: StepCtx, prompt: string): GovernedTools['tools'] {
  return governedTools(step, { prompt, limits: { maxToolCalls: 10 } }).tools;
}

export type Refusal = RefusedToolResult;
