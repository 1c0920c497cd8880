/**
 * The toolplane command line.
 *
 *   tsx client.ts manifest check <file>      validate and lint a manifest
 *   tsx client.ts manifest digest <file>     print per-tool and manifest digests
 */
import { Command } from 'commander';
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
