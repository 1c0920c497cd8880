// `toolplane run`: start an agent run and tell the truth while it goes: each effect, a missing
// worker, a call waiting for a person (and the exact command that answers it), the root cause of a failure.
import { WorkflowFailedError, type Client, type WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { Command } from 'commander';
import { loadManifest } from '../runtime/manifest-file';
import { DEFAULT_TASK_QUEUE } from '../common/names';
import { followStream, withinMs } from '../inspect/follow';
import { readJournal, type EffectView } from '../inspect/journal';
import { startAgentRun } from '../inspect/start-run';
import type { AgentRunResult } from '../workflows/agent/run';
import { pendingEscalations, type PendingEscalation } from '../workflows/escalation';
import { answerHint, whenLine } from './escalations';
import { CommandFailed, ExitCode } from './exit-codes';
import { shellWord, type ConnectionSettings } from '../inspect/connection';
import {
  causeChain,
  commandLine,
  formatCauseChain,
  NO_WEB_UI,
  webUiLink,
  withClient,
  withCommonOptions,
  type Cli,
} from './shared';
import { agentRunInput, type RunOptions } from './run-input';

export { readScript, parseModel, agentRunInput, type RunOptions } from './run-input';

/** How long `run` waits for a worker before it says none polls the task queue. */
const NO_POLLER_AFTER_MS = Number(process.env.TOOLPLANE_NO_POLLER_AFTER_MS ?? 3000);

/** The `run` command's options. */
function runCommand(program: Command): Command {
  return program
    .command('run')
    .description('start an agent run, print each effect as it happens, what it waits for, and the Web UI link')
    .option('--manifest <file>', 'pin the run to this manifest (the worker refuses it if its own differs)')
    .option('--prompt <text>', "the user's prompt (a scripted model's file may carry it)")
    .option(
      '--principal <id>',
      "on whose behalf the run acts (default: the credential's subject, or user:cli on a worker that takes names)",
    )
    .option(
      '--credential <jwt>',
      "the run's credential, a JWT bound to its workflow id, for a worker that verifies identities (default: TOOLPLANE_RUN_CREDENTIAL)",
      process.env.TOOLPLANE_RUN_CREDENTIAL,
    )
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
    .option('--workflow-id <id>', 'workflow id (default: a new one)');
}

/** A run that failed: its cause chain, as text or JSON; the command fails. */
function reportFailure(
  cli: Cli,
  opts: RunOptions,
  workflowId: string,
  err: WorkflowFailedError,
  url: string | undefined,
): never {
  if (opts.json)
    cli.out(JSON.stringify({ workflowId, status: 'failed', causes: causeChain(err), webUi: url }, null, 2));
  else {
    cli.out(`run ${workflowId} failed:`);
    for (const l of formatCauseChain(err)) cli.out(`  ${l}`);
  }
  throw new CommandFailed(`run ${workflowId} failed`);
}

/** How a run ended, as text or JSON; a run that did not complete fails the command. */
async function reportResult(
  c: Client,
  cli: Cli,
  opts: RunOptions,
  workflowId: string,
  result: AgentRunResult,
  url: string | undefined,
): Promise<void> {
  // The result counts routine calls rather than listing them; the history lists every one.
  const effects = opts.json && result.routineCalls ? (await readJournal(c, workflowId)).effects : undefined;
  if (opts.json) cli.out(JSON.stringify(resultJson(workflowId, result, url, effects), null, 2));
  else {
    cli.out(`run ${workflowId} ${result.status}${result.rule ? ` (${result.rule}: ${result.reason})` : ''}`);
    if (result.answer) cli.out(`answer: ${result.answer}`);
  }
  if (result.status !== 'completed')
    throw new CommandFailed(`run ${workflowId} ended: ${result.status}`, ExitCode.Failed);
}

export function registerRun(program: Command, cli: Cli): void {
  withCommonOptions(runCommand(program)).action((opts: RunOptions) => {
    // Checked before connecting: a bad flag or script is refused without touching the server.
    const manifest = opts.manifest ? loadManifest(opts.manifest).manifest : undefined;
    const input = agentRunInput(manifest, opts);
    return withClient(opts, async (c, settings) => {
      const handle = await startAgentRun(c, input, {
        taskQueue: opts.taskQueue,
        workflowId: opts.workflowId,
        manifest,
      });
      const url = webUiLink(settings, handle.workflowId, handle.firstExecutionRunId);
      // Progress goes to stdout as text; with --json stdout holds only the answer, so progress goes to stderr.
      const say = opts.json ? (l: string) => console.error(l) : (l: string) => cli.out(l);
      say(`run ${handle.workflowId} started on task queue ${opts.taskQueue}; Web UI: ${url ?? NO_WEB_UI}`);
      const watching = watch(c, handle, opts.taskQueue, settings, say);
      let result: AgentRunResult;
      try {
        result = await followStream<AgentRunResult>(
          c,
          handle,
          opts.json ? { line: () => {} } : { line: say, ...(cli.write ? { write: cli.write } : {}) },
        );
      } catch (err) {
        if (!(err instanceof WorkflowFailedError)) throw err;
        reportFailure(cli, opts, handle.workflowId, err, url);
      } finally {
        watching.stop();
        await watching.done;
      }
      await reportResult(c, cli, opts, handle.workflowId, result, url);
    });
  });
}

/**
 * Beside following the effects: says when no worker polls the task queue, and when a call waits
 * for a person, how to answer it. Stops when told.
 */
function watch(
  client: Client,
  handle: WorkflowHandle,
  taskQueue: string,
  settings: ConnectionSettings,
  say: (l: string) => void,
) {
  let stopped = false;
  let wake: () => void = () => {};
  const sleep = (ms: number) =>
    new Promise<void>((r) => {
      const t = setTimeout(r, ms);
      wake = () => {
        clearTimeout(t);
        r();
      };
    });
  const announced = new Set<string>();
  const done = (async () => {
    const started = Date.now();
    let saidNoWorker = false;
    while (!stopped) {
      await sleep(500);
      if (stopped) break;
      const polled = await hasPoller(client, taskQueue).catch(() => true);
      if (!polled) {
        if (!saidNoWorker && Date.now() - started >= NO_POLLER_AFTER_MS) {
          saidNoWorker = true;
          say(
            `no worker polls task queue "${taskQueue}": the run waits until one does. Start one with\n` +
              `  ${commandLine(settings, 'worker', '--manifest <manifest.yaml> --tools <module> --task-queue', shellWord(taskQueue))}`,
          );
        }
        continue;
      }
      if (saidNoWorker) {
        saidNoWorker = false;
        say(`a worker polls task queue "${taskQueue}" now`);
      }
      const pending: PendingEscalation[] = await withinMs(handle, 5000, () => handle.query(pendingEscalations)).catch(
        () => [],
      );
      for (const p of pending) {
        if (announced.has(p.effectKey)) continue;
        announced.add(p.effectKey);
        say(
          `  #${p.position} ${p.toolId} waits for ${p.kind === 'approval' ? 'approval' : 'a decision on an in-doubt call'}: ${p.reason} (${whenLine(p.deadline)})`,
        );
        for (const l of answerHint(handle.workflowId, p, settings)) say(`    ${l}`);
      }
    }
  })();
  return {
    done,
    stop() {
      stopped = true;
      wake();
    },
  };
}

async function hasPoller(client: Client, taskQueue: string): Promise<boolean> {
  const res = await client.workflowService.describeTaskQueue({
    namespace: client.options.namespace,
    taskQueue: { name: taskQueue, kind: temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
    taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
  });
  return (res.pollers?.length ?? 0) > 0;
}

/** The run's end as JSON: its effects are the result's journal, or every effect its history shows (`effects`, from `readJournal`). */
export function resultJson(workflowId: string, result: AgentRunResult, webUi?: string, effects?: EffectView[]) {
  const listed = effects ?? result.journal.map((e) => ({ ...e, outcome: e.outcome ?? null }));
  return {
    workflowId,
    status: result.status,
    answer: result.answer,
    ...(result.rule ? { rule: result.rule, reason: result.reason } : {}),
    effects: listed.map((e) => ({
      position: e.position,
      tool: e.toolId,
      key: e.effectKey ?? null,
      decision: e.decision,
      rule: e.rule ?? null,
      reason: e.reason ?? null,
      outcome: e.outcome,
    })),
    usage: result.usage,
    webUi,
  };
}
