/**
 * The toolplane command line.
 *
 *   tsx client.ts manifest check <file>      validate and lint a manifest
 *   tsx client.ts manifest digest <file>     print per-tool and manifest digests
 *   tsx client.ts run --manifest <file> --prompt <text> --principal <id> --model scripted:<script.json>|openai:<model>
 *                     [--grant <toolId>...] [--json]
 *   tsx client.ts show <workflowId>          each effect of a run, from its history
 *   tsx client.ts replay <workflowId>        replay a run's history with this code
 *   tsx client.ts escalations <workflowId>   calls waiting for a person
 *   tsx client.ts resolve <workflowId> <effectKey> retry|landed|abort [--output json] [--by who]
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { Client, Connection } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { Command } from 'commander';
import type { ModelChoice, ScriptTurn } from './activities/model/types';
import type { Manifest } from './catalog/manifest';
import { follow } from './inspect/follow';
import { formatEffects, loadEffects } from './inspect/journal';
import type { AgentRunInput, AgentRunResult } from './workflows/agent-run';
import { MANIFEST_DIGEST, PRINCIPAL } from './workflows/search-attributes';
import { DEFAULT_TASK_QUEUE } from './worker';
import { runUrl } from './scripts/dev-server';
import { probe } from './scripts/dev-server';
import { pendingEscalations, resolveEscalation, type EscalationDecision } from './workflows/escalation';
import { CatalogError } from './catalog/errors';
import { manifestDigest, toolDigest } from './catalog/digest';
import { loadManifest } from './catalog/manifest-file';

export function buildProgram(out: (line: string) => void = console.log): Command {
  const program = new Command().name('toolplane').description('Durable, governed tool calls for AI agents on Temporal');
  program.exitOverride();

  const manifest = program.command('manifest').description('work with manifests');
  manifest
    .command('check <file>')
    .description('validate a manifest and print warnings')
    .action((file: string) => {
      const loaded = loadManifest(file);
      for (const w of loaded.warnings) out(`warning: ${file}${w.line ? `:${w.line}` : ''} at ${w.path}: ${w.message}`);
      out(`${file}: ok, ${loaded.manifest.tools.length} tools, ${Object.keys(loaded.manifest.servers).length} servers, ${loaded.warnings.length} warnings`);
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
    .requiredOption('--manifest <file>', 'the manifest the run is pinned to')
    .option('--prompt <text>', "the user's prompt (a scripted model's file may carry it)")
    .option('--principal <id>', 'on whose behalf the run acts', 'user:cli')
    .requiredOption('--model <choice>', 'scripted:<script.json> or openai:<model>')
    .option('--base-url <url>', 'Chat Completions base URL for openai: models (OpenAI, vLLM, Ollama, llama.cpp)')
    .option('--api-key-env <name>', 'the environment variable with the API key (read by the worker)', 'OPENAI_API_KEY')
    .option('--grant <toolId...>', 'tools this run may reach (exact identities; default: every declared tool)')
    .option('--capability <name...>', 'capabilities the run holds, e.g. extension-runtime')
    .option('--max-turns <n>', 'model turns', '20')
    .option('--max-tool-calls <n>', 'tool calls')
    .option('--deadline <duration>', 'e.g. 10m')
    .option('--task-queue <name>', 'the workers\' task queue', process.env.TOOLPLANE_TASK_QUEUE ?? DEFAULT_TASK_QUEUE)
    .option('--workflow-id <id>', 'workflow id (default: a new one)')
    .option('--json', 'print the final result and journal as JSON')
    .action((opts: RunOptions) =>
      withClient(async (c) => {
        const { manifest } = loadManifest(opts.manifest);
        const input = agentRunInput(manifest, opts, (l) => !opts.json && out(l));
        const handle = await startAgentRun(c, input, { taskQueue: opts.taskQueue, workflowId: opts.workflowId });
        const url = runUrl({ uiUrl: process.env.TEMPORAL_UI_URL ?? 'http://localhost:8233', namespace: c.options.namespace }, handle.workflowId, handle.firstExecutionRunId);
        if (!opts.json) out(`run ${handle.workflowId} started; Web UI: ${url}`);
        const result = await follow<AgentRunResult>(handle, opts.json ? () => {} : out);
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
    return new Client({ connection: await Connection.connect({ address }), namespace: process.env.TEMPORAL_NAMESPACE ?? 'default' });
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
        const { effects, status } = await loadEffects(c, workflowId);
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
        await Worker.runReplayHistory({ workflowsPath: require.resolve('./workflows'), replayName: 'toolplane-replay' }, history, workflowId);
        out(`${workflowId}: replayed ${history.events?.length ?? 0} events with the current code, no divergence`);
      }),
    );
  program
    .command('escalations <workflowId>')
    .description('calls of a run that wait for a person')
    .action((workflowId: string) =>
      withClient(async (c) => {
        const pending = await c.workflow.getHandle(workflowId).query(pendingEscalations);
        if (pending.length === 0) out('nothing is waiting');
        for (const p of pending) out(`${p.effectKey}  #${p.position} ${p.toolId}  ${p.kind}: ${p.reason}  (until ${new Date(p.deadline).toISOString()})`);
      }),
    );
  program
    .command('resolve <workflowId> <effectKey> <decision>')
    .description('decide a call that waits for a person: retry, landed (with --output) or abort')
    .option('--output <json>', 'the output to record when the call landed')
    .option('--by <who>', 'who decided', process.env.USER)
    .option('--reason <text>', 'why (for abort)')
    .action((workflowId: string, effectKey: string, decision: string, opts: { output?: string; by?: string; reason?: string }) =>
      withClient(async (c) => {
        let d: EscalationDecision;
        if (decision === 'landed') d = { effectKey, decision, output: opts.output ? JSON.parse(opts.output) : null, by: opts.by };
        else if (decision === 'retry') d = { effectKey, decision, by: opts.by };
        else if (decision === 'abort') d = { effectKey, decision, by: opts.by, reason: opts.reason };
        else throw new Error(`decision must be retry, landed or abort, not "${decision}"`);
        await c.workflow.getHandle(workflowId).executeUpdate(resolveEscalation, { args: [d] });
        out(`${workflowId}: ${effectKey} ${decision}`);
      }),
    );
  return program;
}

interface RunOptions {
  manifest: string;
  prompt?: string;
  principal: string;
  model: string;
  baseUrl?: string;
  apiKeyEnv: string;
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

export function parseModel(spec: string, opts: Pick<RunOptions, 'baseUrl' | 'apiKeyEnv'>): { model: ModelChoice; prompt?: string } {
  const [kind, ...rest] = spec.split(':');
  const arg = rest.join(':');
  if (kind === 'scripted' && arg) {
    const script = readScript(arg);
    return { model: { provider: 'scripted', name: `scripted:${arg.split('/').pop()}`, script: script.turns }, prompt: script.prompt };
  }
  if (kind === 'openai' && arg) return { model: { provider: 'openai', model: arg, baseUrl: opts.baseUrl, apiKeyEnv: opts.apiKeyEnv } };
  throw new Error(`--model must be scripted:<script.json> or openai:<model>, not "${spec}"`);
}

export function agentRunInput(manifest: Manifest, opts: RunOptions, note: (line: string) => void = () => {}): AgentRunInput {
  const { model, prompt: scriptPrompt } = parseModel(opts.model, opts);
  const prompt = opts.prompt ?? scriptPrompt;
  if (!prompt) throw new Error('--prompt is required (the script does not carry one)');
  const grants = opts.grant ?? manifest.tools.map((t) => t.id);
  if (!opts.grant) note(`granting every declared tool (${grants.length}); pass --grant to narrow`);
  return {
    prompt,
    principal: opts.principal,
    grants,
    manifest,
    manifestDigest: manifestDigest(manifest),
    model,
    ...(opts.capability?.length ? { capabilities: opts.capability } : {}),
    limits: { maxTurns: Number(opts.maxTurns), ...(opts.maxToolCalls ? { maxToolCalls: Number(opts.maxToolCalls) } : {}), ...(opts.deadline ? { deadline: opts.deadline } : {}) },
  };
}

export async function startAgentRun(client: Client, input: AgentRunInput, opts: { taskQueue?: string; workflowId?: string } = {}) {
  return client.workflow.start('agentRun', {
    taskQueue: opts.taskQueue ?? DEFAULT_TASK_QUEUE,
    workflowId: opts.workflowId ?? `agent-${randomUUID()}`,
    args: [input],
    typedSearchAttributes: [
      { key: PRINCIPAL, value: input.principal },
      { key: MANIFEST_DIGEST, value: input.manifestDigest },
    ],
    staticSummary: input.prompt.slice(0, 200),
  });
}

export function resultJson(workflowId: string, result: AgentRunResult, webUi?: string) {
  return {
    workflowId,
    status: result.status,
    answer: result.answer,
    ...(result.rule ? { rule: result.rule, reason: result.reason } : {}),
    effects: result.journal.map((e) => ({ position: e.position, tool: e.toolId, key: e.effectKey ?? null, decision: e.decision, rule: e.rule ?? null, reason: e.reason ?? null, outcome: e.outcome ?? null })),
    usage: result.usage,
    webUi,
  };
}

export async function main(argv: string[]): Promise<number> {
  try {
    await buildProgram().parseAsync(argv);
    return 0;
  } catch (err) {
    const e = err as { code?: string; exitCode?: number; message?: string };
    if (e.code?.startsWith('commander.')) return e.exitCode ?? 1;
    console.error(CatalogError.is(err) ? err.message : (e.message ?? String(err)));
    return CatalogError.is(err) && err.code === 'ManifestInvalid' ? 2 : 1;
  }
}

if (require.main === module) {
  main(process.argv).then((code) => process.exit(code));
}
