/**
 * The toolplane command line.
 *
 *   tsx client.ts manifest check <file>      validate and lint a manifest
 *   tsx client.ts manifest digest <file>     print per-tool and manifest digests
 *   tsx client.ts show <workflowId>          each effect of a run, from its history
 *   tsx client.ts replay <workflowId>        replay a run's history with this code
 *   tsx client.ts escalations <workflowId>   calls waiting for a person
 *   tsx client.ts resolve <workflowId> <effectKey> retry|landed|abort [--output json] [--by who]
 */
import { Client, Connection } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { Command } from 'commander';
import { formatEffects, loadEffects } from './inspect/journal';
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
