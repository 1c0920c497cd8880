// Workflow-safe: the same scripted agent through @temporalio/ai-sdk and the `ai` package, whose
// tools run as proxied activities: the peer toolplane is measured against.
import { temporalProvider } from '@temporalio/ai-sdk/workflow';
import { proxyActivities } from '@temporalio/workflow';
import { generateText, jsonSchema, stepCountIs, tool } from 'ai';
import type { BenchActivities } from './activities';
import type { LoopInput } from './workflows';

const { plainLookup } = proxyActivities<BenchActivities>({ startToCloseTimeout: '30s' });

export async function aiSdkLoop(input: LoopInput): Promise<number> {
  let made = 0;
  await generateText({
    model: temporalProvider.languageModel(`bench:${input.calls}:${input.perTurn}`),
    prompt: 'Look up each of our customers in the CRM, again and again.',
    tools: {
      crm__lookup_customer: tool({
        description: 'Look a customer up in the CRM by email address.',
        inputSchema: jsonSchema<{ email: string }>({
          type: 'object',
          properties: { email: { type: 'string' } },
          required: ['email'],
          additionalProperties: false,
        }),
        execute: async (args) => {
          made++;
          return plainLookup(args);
        },
      }),
    },
    stopWhen: stepCountIs(Math.ceil(input.calls / input.perTurn) + 1),
  });
  return made;
}
