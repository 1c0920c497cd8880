// Workflow-safe, shared by the client and the workflows: the shape a run's input must have.
// The client refuses a malformed input before it starts anything; a workflow that receives one anyway
// (another client, an old one) fails its run at once with a typed, non-retryable error instead of failing
// its workflow task forever. Unknown fields pass, so inputs of runs already in history still replay.
import { z } from 'zod';
import { RunInputInvalid, type RunInputProblem } from '../catalog/errors';
import type { Manifest } from '../catalog/manifest';
import { SENSITIVITY_LEVELS } from '../catalog/sensitivity';
import type { Policy } from '../catalog/policy';
import { modelRequestShape, type Known, type ModelRequest } from '../catalog/model-request';
import { RunFailureType } from '../catalog/failure-types';
import { durationText } from '../catalog/duration';
import { toolIdText } from '../catalog/tool-id';

/** The failure type of a run whose input was malformed (the error's `code` on the client side). */
export const RUN_INPUT_INVALID = RunFailureType.RunInputInvalid;

/**
 * A shape several fields share, built once when first used (zod's shapes are immutable, so fields
 * share one instance): building them is most of what checking a run's input costs, in every run.
 */
function once<T>(build: () => T): () => T {
  let built: T | undefined;
  return () => (built ??= build());
}

const nonEmpty = once(() => z.string().min(1, 'must not be empty'));
const count = once(() =>
  z.number({ error: 'must be a number' }).int('must be a whole number').nonnegative('must not be negative'),
);
const toolIdShape = once(() => toolIdText('must be a tool identity "tool://server/name" or "ext:<plugin>:<name>"'));
const positive = once(() =>
  z.number({ error: 'must be a number' }).int('must be a whole number').positive('must be at least 1'),
);

/** A positive duration: milliseconds, or the duration grammar (catalog/duration.ts). */
function durationShape() {
  return z.union(
    [
      z.number().positive('must be a positive number of milliseconds'),
      durationText('must be a duration such as "90s", "10m" or "1h"').refine(
        (d) => parseFloat(d) > 0,
        'must be longer than zero',
      ),
    ],
    { error: 'must be a duration such as "90s", "10m" or "1h" (or milliseconds)' },
  );
}

/** The run's own limits; the worker's caps (the manifest's `limits`) may be tighter. */
function limitsShape() {
  return z
    .object({
      maxTurns: positive().optional(),
      maxToolCalls: count().optional(),
      /** Model tokens, input and output together. */
      maxTokens: count().optional(),
      maxCostMicros: count().optional(),
      /** From the start of the run, e.g. "10m" (a duration as the manifest writes it, or milliseconds). */
      deadline: durationShape().optional(),
      maxDelegationDepth: count().optional(),
      /** Per currency, in minor units; only tightens the manifest's `spend.max_minor_per_payee`. */
      maxSpendMinorPerPayee: z
        .record(z.string(), z.union([count(), z.string().regex(/^\d+$/, 'must be whole minor units')]))
        .optional(),
      /** Only tightens each tool's `egress.max_bytes_per_run`. */
      maxEgressBytesPerDestination: count().optional(),
    })
    .loose();
}

/** What every run asks for; the worker decides. */
function askedFields() {
  return {
    /** Who the run asks to act as. With a credential it may be left out: the worker takes the token's subject. */
    principal: nonEmpty().optional(),
    /**
     * The run's credential: a JWT from an issuer the worker trusts, for its audience, bound to this run's
     * workflow id (`toolplane_workflow_id`). A worker that verifies identities refuses a run without one.
     */
    credential: nonEmpty().optional(),
    /** Tools the run asks for (default: every tool the worker lets this principal have). */
    grants: z.array(toolIdShape()).optional(),
    /** Capabilities the run asks for, such as `extension-runtime`; the worker decides. */
    capabilities: z.array(nonEmpty()).optional(),
    /** The manifest digest the caller pinned; a worker with another manifest refuses the run. */
    manifestDigest: z.string().optional(),
    /** How many delegations deep this run is (a subagent's call runs one level below its parent). */
    delegationDepth: count().optional(),
  };
}

/** An agent run's input. */
function agentShape() {
  return z
    .object({
      ...askedFields(),
      prompt: nonEmpty(),
      model: modelRequestShape(),
      /** Which granted tools the model may see (default: all of them). */
      policy: z.custom<Policy>().optional(),
      limits: limitsShape().optional(),
      systemPrompt: z.string().optional(),
      /** How sensitive the prompt itself is (default internal). */
      promptSensitivity: z.enum(SENSITIVITY_LEVELS).optional(),
      /**
       * Continue as new once this run's history holds this many events (default: when Temporal
       * suggests it). The chain is one run: positions, budgets, labels and the conversation go on.
       */
      continueAsNewAfterEvents: positive().optional(),
      /**
       * Whether the model's text streams to clients as it is written (`streamRun`; default true). Each
       * turn's tokens cost a few signals in the run's history; the run's effects stream either way.
       */
      streamTokens: z.boolean().optional(),
      /**
       * List every call in the run's result (`AgentRunResult.journal`), routine ones too. By default the
       * result lists the calls that are not routine and counts the others (`routineCalls`); `readJournal`
       * and `toolplane show` list every call either way.
       */
      fullJournal: z.boolean().optional(),
      /** Set by the run itself when it continues as new; a run a client starts with it is refused. */
      carry: z.unknown().optional(),
    })
    .loose();
}

/** A tool run's input. */
function toolShape() {
  return z
    .object({
      ...askedFields(),
      calls: z.array(z.object({ toolId: toolIdShape(), args: z.unknown() }).loose()),
      /** Stop at the first failed call (default) or go on. */
      continueOnError: z.boolean().optional(),
    })
    .loose();
}

/** Who acts: the name a run asks to act as, or a credential whose subject the worker takes. */
const someone = {
  message: 'must name a principal, or carry a credential (a JWT) whose subject the worker takes',
  path: ['principal'],
};
const whoActs = (i: { principal?: string; credential?: string; carry?: unknown }) =>
  i.principal !== undefined || i.credential !== undefined || i.carry !== undefined;

/**
 * The shapes of a run's input, written once: the types below are derived from them, and the client
 * and the workflow check an input against them. Objects are strict in the types and loose when
 * checked (`.loose()`), so fields of runs already in history (`provider`) still pass.
 */
const agentInputShape = () => agentShape().refine(whoActs, someone);
const toolInputShape = () => toolShape().refine(whoActs, someone);

interface Shapes {
  agent: ReturnType<typeof agentInputShape>;
  tool: ReturnType<typeof toolInputShape>;
  limits: ReturnType<typeof limitsShape>;
}

/** A run's own limits (`AgentRunInput.limits`). */
export type RunLimits = Known<z.input<Shapes['limits']>>;
/** An agent run's input as a client sends it; `carry` is the run's own (see agentRun's `AgentRunInput`). */
export type AgentRunInputShape = Omit<Known<z.input<Shapes['agent']>>, 'model' | 'limits'> & {
  model: ModelRequest;
  limits?: RunLimits;
};
/** A tool run's input as a client sends it. */
export type ToolRunInputShape = Omit<Known<z.input<Shapes['tool']>>, 'calls'> & {
  calls: { toolId: string; args: unknown }[];
};

// Each built on first use, not when the module loads: every workflow run loads this module afresh, and
// checks one shape (an agent run never builds the tool run's, nor a run of one's own either).
const agentInput = once(agentInputShape);
const toolInput = once(toolInputShape);

function problemsOf(shape: z.ZodType, input: unknown): RunInputProblem[] {
  // Checked once per run: zod's compiled fast path would be compiled afresh in every run and used once.
  const parsed = shape.safeParse(input, { jitless: true });
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
  const problems = problemsOf(agentInput(), input);
  return manifest && typeof input === 'object' && input ? [...problems, ...undeclared(manifest, input)] : problems;
}

export function toolRunInputProblems(input: unknown, manifest?: Manifest): RunInputProblem[] {
  const problems = problemsOf(toolInput(), input);
  return manifest && typeof input === 'object' && input ? [...problems, ...undeclared(manifest, input)] : problems;
}

/** Throws `RunInputInvalid` naming every problem. */
export function assertRunInput(workflow: 'agentRun' | 'toolRun', input: unknown, manifest?: Manifest): void {
  const problems =
    workflow === 'agentRun' ? agentRunInputProblems(input, manifest) : toolRunInputProblems(input, manifest);
  if (problems.length > 0) throw new RunInputInvalid(workflow, problems);
}
