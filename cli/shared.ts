// What every command shares: output (text or --json), connection flags and a client.
import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { Command } from 'commander';
import { ToolplaneError } from '../catalog/errors';
import {
  connectClient,
  connectionArgs,
  connectionSettings,
  runUrl,
  type ConnectionFlags,
  type ConnectionSettings,
} from '../inspect/connection';
import { ErrorCode } from '../catalog/error-codes';

export interface CommonOptions extends ConnectionFlags {
  json?: boolean;
}

export interface Cli {
  /** One line of standard output. */
  out(line: string): void;
  /** One line of standard error. */
  err(line: string): void;
  /** Text without a line end (a model's tokens as they arrive); absent where output is taken line by line. */
  write?(text: string): void;
}

/** `--json` and the connection flags, on a command that talks to Temporal. */
export function withCommonOptions(cmd: Command): Command {
  return withJson(cmd)
    .option('--address <host:port>', 'Temporal frontend (default: TEMPORAL_ADDRESS, the profile, 127.0.0.1:7233)')
    .option('--namespace <ns>', 'Temporal namespace (default: TEMPORAL_NAMESPACE, the profile, "default")')
    .option('--profile <name>', 'profile of the Temporal config file (default: TEMPORAL_PROFILE, "default")')
    .option(
      '--ui-url <url>',
      "the server's Web UI, for printed links (default: TEMPORAL_UI_URL; a local server's at its port + 1000)",
    );
}

export function withJson(cmd: Command): Command {
  return cmd.option('--json', 'print the answer as JSON');
}

/** Prints `value` as JSON when asked, else the lines. */
export function emit(cli: Cli, opts: { json?: boolean }, value: unknown, lines: () => string[]): void {
  if (opts.json) cli.out(JSON.stringify(value, null, 2));
  else for (const l of lines()) cli.out(l);
}

/** Opens a client on the connection the flags, the environment and the profile name, runs `fn`, closes it. */
export async function withClient<T>(
  opts: ConnectionFlags,
  fn: (client: Client, settings: ConnectionSettings) => Promise<T>,
): Promise<T> {
  const settings = connectionSettings({
    address: opts.address,
    namespace: opts.namespace,
    profile: opts.profile,
    uiUrl: opts.uiUrl,
  });
  const client = await connectClient(settings);
  try {
    return await fn(client, settings);
  } finally {
    await client.connection.close();
  }
}

/** Web UI link of a run on the server the settings reach, when its Web UI is known (see `webUiBase`). */
export function webUiLink(settings: ConnectionSettings, workflowId: string, runId?: string): string | undefined {
  return runUrl(settings, workflowId, runId);
}

/** What to print where a Web UI link would go, when the UI of the server is unknown. */
export const NO_WEB_UI = 'unknown for this server (set TEMPORAL_UI_URL or --ui-url)';

/** `npx toolplane <args>` with the connection flags that reach the same server, for an operator to paste. */
export function commandLine(settings: ConnectionSettings | undefined, ...args: string[]): string {
  return ['npx toolplane', ...args, ...(settings ? connectionArgs(settings) : [])].join(' ');
}

export class RunNotFound extends ToolplaneError<
  typeof ErrorCode.RunNotFound,
  { workflowId: string; namespace: string }
> {
  constructor(workflowId: string, namespace: string) {
    super(ErrorCode.RunNotFound, `no run "${workflowId}" in namespace "${namespace}"`, { workflowId, namespace });
  }
}

/** A person answered a run that has already finished: the run exists, and nothing in it waits any more. */
export class RunFinished extends ToolplaneError<
  typeof ErrorCode.RunFinished,
  { workflowId: string; namespace: string; status: string }
> {
  constructor(workflowId: string, namespace: string, status: string) {
    super(
      ErrorCode.RunFinished,
      `run "${workflowId}" in namespace "${namespace}" has finished (${status}): nothing waits for a decision`,
      { workflowId, namespace, status },
    );
  }
}

/**
 * Runs `fn`, which acts on a run that must still be running (an update); a run the server no
 * longer lets it act on because it finished becomes RunFinished, one it does not know RunNotFound.
 */
export async function onRunningRun<T>(
  client: Client,
  workflowId: string,
  settings: ConnectionSettings,
  fn: () => Promise<T>,
): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError || isNotFound(err))) throw err;
    // An update to a closed run is answered as not found; describe tells a finished run from none.
    const status = await client.workflow
      .getHandle(workflowId)
      .describe()
      .then((d) => d.status.name)
      .catch(() => undefined);
    if (status && status !== 'RUNNING') throw new RunFinished(workflowId, settings.namespace, status);
    throw new RunNotFound(workflowId, settings.namespace);
  }
}

/** Runs `fn` against one run; a workflow id the server does not know becomes RunNotFound. */
export async function onRun<T>(workflowId: string, settings: ConnectionSettings, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError || isNotFound(err)) throw new RunNotFound(workflowId, settings.namespace);
    throw err;
  }
}

/** gRPC NOT_FOUND (5): the code is a number, never a string. */
function isNotFound(err: unknown): boolean {
  for (let e: unknown = err; e; e = (e as { cause?: unknown }).cause) {
    if (typeof e === 'object' && (e as { code?: unknown }).code === 5) return true;
  }
  return false;
}

/** An error and its causes, outermost first: `Workflow execution failed` ← `activity failed` ← `cannot reach …/v1`. */
export function causeChain(err: unknown): string[] {
  const chain: string[] = [];
  const seen = new Set<unknown>();
  for (let e: unknown = err; e !== undefined && e !== null && !seen.has(e); e = (e as { cause?: unknown }).cause) {
    seen.add(e);
    if (e instanceof Error) {
      const type = (e as { type?: unknown }).type;
      const label = typeof type === 'string' && type ? type : e.name;
      chain.push(`${label}: ${e.message}`);
    } else {
      chain.push(String(e));
      break;
    }
  }
  return chain;
}

export function formatCauseChain(err: unknown): string[] {
  return causeChain(err).map((l, i) => (i === 0 ? l : `${'  '.repeat(i)}caused by ${l}`));
}
