// `toolplane run`'s input: the flags as an agent run's input (the model, a scripted model's file,
// grants and limits), each problem named by the flag the user typed.
import fs from 'node:fs';
import type { ScriptTurn } from '../common/wire';
import type { ModelRequest } from '../catalog/authority';
import { manifestDigest } from '../catalog/digest';
import { RunInputInvalid, ToolplaneError, type RunInputProblem } from '../catalog/errors';
import type { Manifest } from '../catalog/manifest';
import { agentRunInputProblems } from '../common/run-input';
import type { AgentRunInput } from '../workflows/agent/run';
import { usageError } from './exit-codes';
import type { CommonOptions } from './shared';
import { ErrorCode } from '../catalog/error-codes';

export interface RunOptions extends CommonOptions {
  manifest?: string;
  prompt?: string;
  principal?: string;
  credential?: string;
  model: string;
  grant?: string[];
  capability?: string[];
  maxTurns: string;
  maxToolCalls?: string;
  deadline?: string;
  taskQueue: string;
  workflowId?: string;
}

/** A scripted model's file is a list of turns, or `{ prompt, turns }`. */
export function readScript(file: string): { prompt?: string; turns: ScriptTurn[] } {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw usageError(`cannot read the model script ${file}: ${(err as Error).message}`);
  }
  let raw: ScriptTurn[] | { prompt?: string; turns: ScriptTurn[] };
  try {
    raw = JSON.parse(text) as typeof raw;
  } catch (err) {
    throw usageError(`the model script ${file} is not JSON: ${(err as Error).message}`);
  }
  if (Array.isArray(raw)) return { turns: raw };
  const obj = raw as { prompt?: unknown; turns?: unknown } | null;
  if (
    !obj ||
    typeof obj !== 'object' ||
    !Array.isArray(obj.turns) ||
    !['string', 'undefined'].includes(typeof obj.prompt)
  )
    throw usageError(`the model script ${file} is a list of turns or { "prompt": "<text>", "turns": [...] }`);
  return raw;
}

/** Where each part of a run's input comes from on the command line. */
function flagOf(path: string, opts: Pick<RunOptions, 'model'>): string {
  const flags: Record<string, string> = {
    prompt: '--prompt',
    principal: '--principal',
    'limits.maxTurns': '--max-turns',
    'limits.maxToolCalls': '--max-tool-calls',
    'limits.deadline': '--deadline',
  };
  if (flags[path]) return flags[path];
  if (path.startsWith('grants')) return `--grant ${path.slice('grants'.length)}`.trim();
  if (path.startsWith('capabilities')) return '--capability';
  if (path.startsWith('model.script')) return `--model ${opts.model}: turns${path.slice('model.script'.length)}`;
  if (path.startsWith('model')) return '--model';
  return path;
}

/** What the user typed for the flag a problem is about. */
function typedFor(opts: Pick<RunOptions, 'deadline' | 'grant'>, path: string): string | undefined {
  if (path === 'limits.deadline' && opts.deadline !== undefined) return JSON.stringify(opts.deadline);
  const grant = /^grants\[(\d+)\]$/.exec(path);
  return grant ? opts.grant?.[Number(grant[1])] : undefined;
}

/** `scripted:<file>` plays a script; anything else names an endpoint the worker declares, and optionally one of its models. */
export function parseModel(spec: string): { model: ModelRequest; prompt?: string } {
  const [endpoint, ...rest] = spec.split(':');
  const arg = rest.join(':');
  if (endpoint === 'scripted' && arg) {
    const script = readScript(arg);
    return {
      model: { endpoint: 'scripted', name: `scripted:${arg.split('/').pop()}`, script: script.turns },
      prompt: script.prompt,
    };
  }
  if (!endpoint)
    throw new ToolplaneError(
      ErrorCode.UsageError,
      `--model must be scripted:<script.json> or <endpoint>[:<model>], not "${spec}"`,
    );
  return { model: { endpoint, ...(arg ? { model: arg } : {}) } };
}

function positiveInt(flag: string, value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw usageError(`${flag} must be a positive integer, not "${value}"`);
  return n;
}

export function agentRunInput(
  manifest: Manifest | undefined,
  opts: Omit<RunOptions, 'taskQueue' | keyof CommonOptions>,
): AgentRunInput {
  const { model, prompt: scriptPrompt } = parseModel(opts.model);
  const prompt = opts.prompt ?? scriptPrompt;
  if (!prompt) throw new ToolplaneError(ErrorCode.UsageError, '--prompt is required (the script does not carry one)');
  const input: AgentRunInput = {
    prompt,
    ...(opts.principal || !opts.credential ? { principal: opts.principal ?? 'user:cli' } : {}),
    ...(opts.credential ? { credential: opts.credential } : {}),
    ...(opts.grant ? { grants: opts.grant } : {}),
    ...(manifest ? { manifestDigest: manifestDigest(manifest) } : {}),
    model,
    ...(opts.capability?.length ? { capabilities: opts.capability } : {}),
    limits: {
      maxTurns: positiveInt('--max-turns', opts.maxTurns),
      ...(opts.maxToolCalls ? { maxToolCalls: positiveInt('--max-tool-calls', opts.maxToolCalls) } : {}),
      ...(opts.deadline !== undefined ? { deadline: opts.deadline } : {}),
    },
  };
  // The client library's checks (startAgentRun repeats them), reported by flag.
  const problems = agentRunInputProblems(input, manifest);
  if (problems.length > 0)
    throw new RunInputInvalid(
      'agentRun',
      problems.map((p): RunInputProblem => {
        const typed = typedFor(opts, p.path);
        return {
          path: flagOf(p.path, opts),
          message: `${p.message}${typed !== undefined ? ` (given: ${typed})` : ''}`,
        };
      }),
    );
  return input;
}
