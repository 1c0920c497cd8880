#!/usr/bin/env node
/**
 * The toolplane command line (`npx toolplane …`).
 *
 *   toolplane worker --manifest <file> --tools <module>...   run a worker
 *   toolplane manifest check|digest <file>                   validate a manifest, print digests
 *   toolplane run --model scripted:<script.json>|<endpoint>[:<model>] --prompt <text> --principal <id>
 *                 [--manifest <file>] [--grant <toolId>...] [--capability <name>...] [--json]
 *   toolplane show <workflowId>          each effect of a run, from its history
 *   toolplane replay <workflowId>        replay a run's history with this code
 *   toolplane escalations <workflowId>   calls waiting for a person
 *   toolplane approve|deny <workflowId> <effectKey> [--reason text]
 *   toolplane resolve <workflowId> <effectKey> retry|landed|abort [--output json] [--by who]
 */
import fs from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { Command } from 'commander';
import type { ModelRequest } from './catalog/authority';
import type { ScriptTurn } from './activities/model/types';
import type { Manifest } from './catalog/manifest';
import { DEFAULT_TASK_QUEUE } from './common/names';
import {
  decide,
  followRun,
  pendingDecisions,
  probe,
  readJournal,
  runUrl,
  startAgentRun,
  formatEffects,
} from './client';
import type { AgentRunInput, AgentRunResult, EscalationDecision } from './client';
import { ToolplaneError } from './catalog/errors';
import { manifestDigest, toolDigest } from './catalog/digest';
import { loadManifest } from './catalog/manifest-file';
import { WORKFLOWS_PATH } from './workflows/path';

/** The installed package's version: package.json sits beside the source, or one above the build in lib/. */
function packageVersion(): string {
  for (const dir of [__dirname, path.dirname(__dirname)]) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) return (JSON.parse(fs.readFileSync(file, 'utf8')) as { version: string }).version;
  }
  return 'unknown';
}
const VERSION = packageVersion();

export function buildProgram(out: (line: string) => void = console.log): Command {
  const program = new Command()
    .name('toolplane')
    .description('Durable, governed tool calls for AI agents on Temporal')
    .version(VERSION);
  program
    .command('worker')
    .description('run a toolplane worker: the manifest declares every tool, principal and model endpoint it serves')
    .allowUnknownOption()
    .helpOption(false)
    .argument('[args...]')
    .action(async (args: string[]) => {
      // Loaded only here: the rest of the CLI never pulls in the worker SDK, MCP or the activities.
      // eslint-disable-next-line @typescript-eslint/no-require-imports, @typescript-eslint/consistent-type-imports
      const { runWorkerCli } = require('./worker') as typeof import('./worker');
      await runWorkerCli(['node', 'toolplane-worker', ...args]);
    });
  program.exitOverride();

  const manifest = program.command('manifest').description('work with manifests');
  manifest
    .command('check <file>')
    .description('validate a manifest and print warnings')
    .action((file: string) => {
      const loaded = loadManifest(file);
      for (const w of loaded.warnings) out(`warning: ${file}${w.line ? `:${w.line}` : ''} at ${w.path}: ${w.message}`);
      out(
        `${file}: ok, ${loaded.manifest.tools.length} tools, ${Object.keys(loaded.manifest.servers).length} servers, ${loaded.warnings.length} warnings`,
      );
    });
  manifest
    .command('digest <file>')
    .description('print the digest of every tool and of the manifest')
    .option('--json', 'as JSON')
    .action((file: string, opts: { json?: boolean }) => {
      const { manifest: m } = loadManifest(file);
      const tools = Object.fromEntries(m.tools.map((t) => [t.id, toolDigest(t)]));
      if (opts.json) out(JSON.stringify({ manifest: manifestDigest(m), tools }, null, 2));
      else {
        for (const [id, d] of Object.entries(tools)) out(`${d}  ${id}`);
        out(`${manifestDigest(m)}  (manifest)`);
      }
    });
  program
    .command('run')
    .description('start an agent run, print each effect as it happens and the Web UI link')
    .option('--manifest <file>', 'pin the run to this manifest (the worker refuses it if its own differs)')
    .option('--prompt <text>', "the user's prompt (a scripted model's file may carry it)")
    .option('--principal <id>', 'on whose behalf the run acts', 'user:cli')
    .requiredOption(
      '--model <choice>',
      'scripted:<script.json>, or a model endpoint the worker declares: <endpoint>[:<model>]',
    )
    .option(
      '--grant <toolId...>',
      'tools the run asks for (exact identities; default: all the worker lets the principal have)',
    )
    .option('--capability <name...>', 'capabilities the run asks for, e.g. extension-runtime')
    .option('--max-turns <n>', 'model turns', '20')
    .option('--max-tool-calls <n>', 'tool calls')
    .option('--deadline <duration>', 'e.g. 10m')
    .option('--task-queue <name>', "the workers' task queue", process.env.TOOLPLANE_TASK_QUEUE ?? DEFAULT_TASK_QUEUE)
    .option('--workflow-id <id>', 'workflow id (default: a new one)')
    .option('--json', 'print the final result and journal as JSON')
    .action((opts: RunOptions) =>
      withClient(async (c) => {
        const manifest = opts.manifest ? loadManifest(opts.manifest).manifest : undefined;
        const input = agentRunInput(manifest, opts);
        const handle = await startAgentRun(c, input, { taskQueue: opts.taskQueue, workflowId: opts.workflowId });
        const url = runUrl(
          { uiUrl: process.env.TEMPORAL_UI_URL ?? 'http://localhost:8233', namespace: c.options.namespace },
          handle.workflowId,
          handle.firstExecutionRunId,
        );
        if (!opts.json) out(`run ${handle.workflowId} started; Web UI: ${url}`);
        const result = await followRun<AgentRunResult>(handle, opts.json ? () => {} : out);
        if (opts.json) {
          out(JSON.stringify(resultJson(handle.workflowId, result, url), null, 2));
        } else {
          out(`run ${handle.workflowId} ${result.status}${result.rule ? ` (${result.rule}: ${result.reason})` : ''}`);
          if (result.answer) out(`answer: ${result.answer}`);
        }
      }),
    );

  const connect = async (): Promise<Client> => {
    const address = process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233';
    await probe(address);
    return new Client({
      connection: await Connection.connect({ address }),
      namespace: process.env.TEMPORAL_NAMESPACE ?? 'default',
    });
  };
  const withClient = async <T>(fn: (c: Client) => Promise<T>): Promise<T> => {
    const c = await connect();
    try {
      return await fn(c);
    } finally {
      await c.connection.close();
    }
  };

  program
    .command('show <workflowId>')
    .description('list each effect of a run: position, tool, key, attempts, recovery, outcome, decision')
    .option('--json', 'as JSON')
    .action((workflowId: string, opts: { json?: boolean }) =>
      withClient(async (c) => {
        const { effects, status } = await readJournal(c, workflowId);
        if (opts.json) return out(JSON.stringify({ workflowId, status, effects }, null, 2));
        out(`${workflowId}: ${status}`);
        for (const l of formatEffects(effects)) out(l);
      }),
    );
  program
    .command('replay <workflowId>')
    .description("replay a run's history with the current workflow code; fails on any divergence")
    .action((workflowId: string) =>
      withClient(async (c) => {
        const history = await c.workflow.getHandle(workflowId).fetchHistory();
        const { Worker } = await import('@temporalio/worker');
        await Worker.runReplayHistory(
          { workflowsPath: WORKFLOWS_PATH, replayName: 'toolplane-replay' },
          history,
          workflowId,
        );
        out(`${workflowId}: replayed ${history.events?.length ?? 0} events with the current code, no divergence`);
      }),
    );
  program
    .command('escalations <workflowId>')
    .description('calls of a run that wait for a person')
    .action((workflowId: string) =>
      withClient(async (c) => {
        const pending = await pendingDecisions(c, workflowId);
        if (pending.length === 0) out('nothing is waiting');
        for (const p of pending)
          out(
            `${p.effectKey}  #${p.position} ${p.toolId}  ${p.kind}: ${p.reason}  (until ${new Date(p.deadline).toISOString()})`,
          );
      }),
    );
  for (const answer of ['approve', 'deny'] as const) {
    program
      .command(`${answer} <workflowId> <effectKey>`)
      .description(`${answer} a call that waits for a person's approval`)
      .option('--by <who>', 'who decided', process.env.USER)
      .option('--reason <text>', 'why')
      .action((workflowId: string, effectKey: string, opts: { by?: string; reason?: string }) =>
        withClient(async (c) => {
          await decide(
            c,
            workflowId,
            answer === 'approve'
              ? { effectKey, decision: 'approve', by: opts.by }
              : { effectKey, decision: 'deny', by: opts.by, reason: opts.reason },
          );
          out(`${workflowId}: ${effectKey} ${answer === 'approve' ? 'approved' : 'denied'}`);
        }),
      );
  }
  program
    .command('resolve <workflowId> <effectKey> <decision>')
    .description(
      'decide a call that waits for a person: retry, landed (with --output) or abort an in-doubt call; approve or deny an approval',
    )
    .option('--output <json>', 'the output to record when the call landed')
    .option('--by <who>', 'who decided', process.env.USER)
    .option('--reason <text>', 'why (for abort and deny)')
    .action(
      (
        workflowId: string,
        effectKey: string,
        decision: string,
        opts: { output?: string; by?: string; reason?: string },
      ) =>
        withClient(async (c) => {
          await decide(c, workflowId, escalationDecision(effectKey, decision, opts));
          out(`${workflowId}: ${effectKey} ${decision}`);
        }),
    );
  return program;
}

function escalationDecision(
  effectKey: string,
  decision: string,
  opts: { output?: string; by?: string; reason?: string },
): EscalationDecision {
  switch (decision) {
    case 'landed':
      return { effectKey, decision, output: opts.output ? (JSON.parse(opts.output) as unknown) : null, by: opts.by };
    case 'retry':
    case 'approve':
      return { effectKey, decision, by: opts.by };
    case 'abort':
    case 'deny':
      return { effectKey, decision, by: opts.by, reason: opts.reason };
    default:
      throw new ToolplaneError(
        'UsageError',
        `decision must be retry, landed, abort, approve or deny, not "${decision}"`,
      );
  }
}

export interface RunOptions {
  manifest?: string;
  prompt?: string;
  principal: string;
  model: string;
  grant?: string[];
  capability?: string[];
  maxTurns: string;
  maxToolCalls?: string;
  deadline?: string;
  taskQueue: string;
  workflowId?: string;
  json?: boolean;
}

/** A scripted model's file is a list of turns, or `{ prompt, turns }`. */
export function readScript(file: string): { prompt?: string; turns: ScriptTurn[] } {
  const raw = JSON.parse(fs.readFileSync(file, 'utf8')) as ScriptTurn[] | { prompt?: string; turns: ScriptTurn[] };
  return Array.isArray(raw) ? { turns: raw } : raw;
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
      'UsageError',
      `--model must be scripted:<script.json> or <endpoint>[:<model>], not "${spec}"`,
    );
  return { model: { endpoint, ...(arg ? { model: arg } : {}) } };
}

export function agentRunInput(manifest: Manifest | undefined, opts: Omit<RunOptions, 'taskQueue'>): AgentRunInput {
  const { model, prompt: scriptPrompt } = parseModel(opts.model);
  const prompt = opts.prompt ?? scriptPrompt;
  if (!prompt) throw new ToolplaneError('UsageError', '--prompt is required (the script does not carry one)');
  return {
    prompt,
    principal: opts.principal,
    ...(opts.grant ? { grants: opts.grant } : {}),
    ...(manifest ? { manifestDigest: manifestDigest(manifest) } : {}),
    model,
    ...(opts.capability?.length ? { capabilities: opts.capability } : {}),
    limits: {
      maxTurns: Number(opts.maxTurns),
      ...(opts.maxToolCalls ? { maxToolCalls: Number(opts.maxToolCalls) } : {}),
      ...(opts.deadline ? { deadline: opts.deadline } : {}),
    },
  };
}

export function resultJson(workflowId: string, result: AgentRunResult, webUi?: string) {
  return {
    workflowId,
    status: result.status,
    answer: result.answer,
    ...(result.rule ? { rule: result.rule, reason: result.reason } : {}),
    effects: result.journal.map((e) => ({
      position: e.position,
      tool: e.toolId,
      key: e.effectKey ?? null,
      decision: e.decision,
      rule: e.rule ?? null,
      reason: e.reason ?? null,
      outcome: e.outcome ?? null,
    })),
    usage: result.usage,
    webUi,
  };
}

export async function main(argv: string[]): Promise<number> {
  try {
    await buildProgram().parseAsync(argv);
    return 0;
  } catch (err) {
    const e = err as { code?: unknown; exitCode?: number; message?: string };
    if (typeof e.code === 'string' && e.code.startsWith('commander.')) return e.exitCode ?? 1;
    console.error(e.message ?? String(err));
    if (ToolplaneError.is(err) && (err.code === 'ManifestInvalid' || err.code === 'UsageError')) return 2;
    if (ToolplaneError.is(err) && err.code === 'TemporalUnreachable') return 3;
    return 1;
  }
}

if (require.main === module) {
  void main(process.argv).then((code) => process.exit(code));
}
