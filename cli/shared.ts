// What every command shares: output (text or --json), connection flags and a client.
import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { Command } from 'commander';
import { ToolplaneError } from '../catalog/errors';
import {
  connectClient,
  connectionSettings,
  runUrl,
  type ConnectionFlags,
  type ConnectionSettings,
} from '../inspect/connection';

export interface CommonOptions extends ConnectionFlags {
  json?: boolean;
}

export interface Cli {
  /** One line of standard output. */
  out(line: string): void;
}

/** `--json` and the connection flags, on a command that talks to Temporal. */
export function withCommonOptions(cmd: Command): Command {
  return withJson(cmd)
    .option('--address <host:port>', 'Temporal frontend (default: TEMPORAL_ADDRESS, the profile, 127.0.0.1:7233)')
    .option('--namespace <ns>', 'Temporal namespace (default: TEMPORAL_NAMESPACE, the profile, "default")')
    .option('--profile <name>', 'profile of the Temporal config file (default: TEMPORAL_PROFILE, "default")');
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
  const settings = connectionSettings({ address: opts.address, namespace: opts.namespace, profile: opts.profile });
  const client = await connectClient(settings);
  try {
    return await fn(client, settings);
  } finally {
    await client.connection.close();
  }
}

/** Web UI link of a run (TEMPORAL_UI_URL, else the dev server's http://localhost:8233). */
export function webUiLink(settings: ConnectionSettings, workflowId: string, runId?: string): string | undefined {
  return runUrl(
    { uiUrl: process.env.TEMPORAL_UI_URL ?? 'http://localhost:8233', namespace: settings.namespace },
    workflowId,
    runId,
  );
}

export class RunNotFound extends ToolplaneError<'RunNotFound', { workflowId: string; namespace: string }> {
  constructor(workflowId: string, namespace: string) {
    super('RunNotFound', `no run "${workflowId}" in namespace "${namespace}"`, { workflowId, namespace });
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
