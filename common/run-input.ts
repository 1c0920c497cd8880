// Workflow-safe, shared by the client and the workflows: the shape a run's input must have.
// The client refuses a malformed input before it starts anything; a workflow that receives one anyway
// (another client, an old one) fails its run at once with a typed, non-retryable error instead of failing
// its workflow task forever. Unknown fields pass, so inputs of runs already in history still replay.
import { z } from 'zod';
import { RunInputInvalid, type RunInputProblem } from '../catalog/errors';
import type { Manifest } from '../catalog/manifest';
import { SENSITIVITY_LEVELS } from '../catalog/sensitivity';
import { ScriptTurnShape } from '../catalog/script';
import { RunFailureType } from '../catalog/failure-types';
import { durationText } from '../catalog/duration';
import { toolIdText } from '../catalog/tool-id';

/** The failure type of a run whose input was malformed (the error's `code` on the client side). */
export const RUN_INPUT_INVALID = RunFailureType.RunInputInvalid;

// Built on first use, not when the module loads: every workflow run loads this module afresh, and a run
// that only calls tools from its own workflow (StepCtx) never checks a toolplane run's input.
let built: { agent: z.ZodType; tool: z.ZodType } | undefined;
function shapes(): { agent: z.ZodType; tool: z.ZodType } {
  if (built) return built;
  const nonEmpty = z.string().min(1, 'must not be empty');
  const toolId = toolIdText('must be a tool identity "tool://server/name" or "ext:<plugin>:<name>"');
  const count = z
    .number({ error: 'must be a number' })
    .int('must be a whole number')
    .nonnegative('must not be negative');
  const positive = z.number({ error: 'must be a number' }).int('must be a whole number').positive('must be at least 1');
  const duration = z.union(
    [
      z.number().positive('must be a positive number of milliseconds'),
      durationText('must be a duration such as "90s", "10m" or "1h"').refine(
        (d) => parseFloat(d) > 0,
        'must be longer than zero',
      ),
    ],
    { error: 'must be a duration such as "90s", "10m" or "1h" (or milliseconds)' },
  );

  const model = z
    .looseObject({
      endpoint: nonEmpty.optional(),
      /** Runs started before the worker decided named a provider; they still replay. */
      provider: z.string().optional(),
      model: z.string().optional(),
      temperature: z.number().optional(),
      script: z.array(ScriptTurnShape).optional(),
      name: z.string().optional(),
    })
    .refine((m) => m.endpoint !== undefined || m.provider !== undefined, {
      message: 'must name a model endpoint the worker declares: { "endpoint": "<name>" }',
      path: ['endpoint'],
    });

  const limits = z.looseObject({
    maxTurns: positive.optional(),
    maxToolCalls: count.optional(),
    maxTokens: count.optional(),
    maxCostMicros: count.optional(),
    deadline: duration.optional(),
    maxDelegationDepth: count.optional(),
    maxSpendMinorPerPayee: z
      .record(z.string(), z.union([count, z.string().regex(/^\d+$/, 'must be whole minor units')]))
      .optional(),
    maxEgressBytesPerDestination: count.optional(),
  });

  const asked = {
    principal: nonEmpty.optional(),
    credential: nonEmpty.optional(),
    grants: z.array(toolId).optional(),
    capabilities: z.array(nonEmpty).optional(),
    manifestDigest: z.string().optional(),
    delegationDepth: count.optional(),
  };

  const agent = z.looseObject({
    ...asked,
    prompt: nonEmpty,
    model,
    limits: limits.optional(),
    systemPrompt: z.string().optional(),
    promptSensitivity: z.enum(SENSITIVITY_LEVELS).optional(),
    continueAsNewAfterEvents: positive.optional(),
    streamTokens: z.boolean().optional(),
  });

  const tool = z.looseObject({
    ...asked,
    calls: z.array(z.looseObject({ toolId, args: z.unknown() })),
    continueOnError: z.boolean().optional(),
  });
  // Who acts: the name a run asks to act as, or a credential whose subject the worker takes.
  const someone = {
    message: 'must name a principal, or carry a credential (a JWT) whose subject the worker takes',
    path: ['principal'],
  };
  const whoActs = (i: { principal?: string; credential?: string; carry?: unknown }) =>
    i.principal !== undefined || i.credential !== undefined || i.carry !== undefined;
  built = { agent: agent.refine(whoActs, someone), tool: tool.refine(whoActs, someone) };
  return built;
}

function problemsOf(shape: z.ZodType, input: unknown): RunInputProblem[] {
  const parsed = shape.safeParse(input);
  if (parsed.success) return [];
  return parsed.error.issues.map((i) => ({
    path: i.path.map((p, n) => (typeof p === 'number' ? `[${p}]` : `${n ? '.' : ''}${String(p)}`)).join(''),
    message: i.message,
  }));
}

/** Grants, and tools a tool run calls, that the manifest does not declare. */
function undeclared(manifest: Manifest, input: { grants?: unknown; calls?: unknown }): RunInputProblem[] {
  const declared = new Set(manifest.tools.map((t) => t.id));
  const problems: RunInputProblem[] = [];
  const grants = Array.isArray(input.grants) ? (input.grants as unknown[]) : [];
  grants.forEach((g, i) => {
    if (typeof g === 'string' && !declared.has(g))
      problems.push({ path: `grants[${i}]`, message: `${g} is not a tool the manifest declares` });
  });
  return problems;
}

/** Problems with an agent run's input; with the manifest, also grants it does not declare. */
export function agentRunInputProblems(input: unknown, manifest?: Manifest): RunInputProblem[] {
  const problems = problemsOf(shapes().agent, input);
  return manifest && typeof input === 'object' && input ? [...problems, ...undeclared(manifest, input)] : problems;
}

export function toolRunInputProblems(input: unknown, manifest?: Manifest): RunInputProblem[] {
  const problems = problemsOf(shapes().tool, input);
  return manifest && typeof input === 'object' && input ? [...problems, ...undeclared(manifest, input)] : problems;
}

/** Throws `RunInputInvalid` naming every problem. */
export function assertRunInput(workflow: 'agentRun' | 'toolRun', input: unknown, manifest?: Manifest): void {
  const problems =
    workflow === 'agentRun' ? agentRunInputProblems(input, manifest) : toolRunInputProblems(input, manifest);
  if (problems.length > 0) throw new RunInputInvalid(workflow, problems);
}
