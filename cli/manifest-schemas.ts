// `toolplane manifest schemas --tools <module...>`: the declarations the tool implementations imply
// (their zod-derived input_schema above all), printed to paste, checked against a manifest, or written into it.
import fs from 'node:fs';
import type { Command } from 'commander';
import type { Tool } from '../activities/tool';
import { loadManifest } from '../runtime/manifest-file';
import {
  compactYaml,
  declarationDifferences,
  impliedDeclarations,
  rewriteDeclarations,
  type DeclarationDifference,
} from '../runtime/tool-declarations';
import { canonicalJson } from '../catalog/digest';
import { CommandFailed, usageError } from './exit-codes';
import { emit, withJson, type Cli } from './shared';

interface SchemasOptions {
  tools: string[];
  manifest?: string;
  write?: boolean;
  json?: boolean;
}

async function loadTools(modules: string[]): Promise<Tool[]> {
  // The worker's own loader (createTools(), a default export or `tools`), loaded only for this command.
  // eslint-disable-next-line @typescript-eslint/no-require-imports, @typescript-eslint/consistent-type-imports
  const { loadToolModules } = require('./tool-modules') as typeof import('./tool-modules');
  return loadToolModules(modules);
}

function differenceLine(d: DeclarationDifference): string {
  if (d.field === 'undeclared') return `${d.toolId}: not declared in the manifest`;
  const show = (v: unknown) => (typeof v === 'string' ? JSON.stringify(v) : canonicalJson(v));
  return `${d.toolId}: ${d.field} differs\n  manifest:       ${show(d.declared)}\n  implementation: ${show(d.implied)}`;
}

export function registerManifestSchemas(manifest: Command, cli: Cli): void {
  withJson(
    manifest
      .command('schemas')
      .description(
        'print the declarations (id, description, input_schema, safety) the tool implementations imply, to paste under `tools:`; with --manifest, compare (exit 1 on a difference) or --write the differing description and input_schema into it',
      )
      .requiredOption(
        '--tools <module...>',
        'modules exporting tool implementations, as `toolplane worker --tools` takes',
      )
      .option('--manifest <file>', 'compare with this manifest')
      .option('--write', "with --manifest: write the implementations' description and input_schema into it"),
  ).action(async (opts: SchemasOptions) => {
    const implied = impliedDeclarations(await loadTools(opts.tools));
    if (!opts.manifest) {
      if (opts.write) throw usageError('--write needs --manifest <file>');
      emit(cli, opts, { tools: implied }, () => [
        '# Paste under `tools:` and add what the operator decides: recovery, sensitivity, field rules.',
        compactYaml(implied),
      ]);
      return;
    }
    const file = opts.manifest;
    const differences = declarationDifferences(loadManifest(file).manifest, implied);
    if (!opts.write) {
      emit(cli, opts, { file, differences }, () =>
        differences.length
          ? differences.flatMap((d) => differenceLine(d).split('\n'))
          : [`${file}: every implementation matches its declaration (${implied.length} tools)`],
      );
      if (differences.length)
        throw new CommandFailed(`${file}: ${differences.length} declarations differ from the implementations`);
      return;
    }
    const rewritten = rewriteDeclarations(fs.readFileSync(file, 'utf8'), /\.json$/i.test(file), differences);
    if (rewritten.written.length) {
      fs.writeFileSync(file, rewritten.text);
      loadManifest(file); // what was written is still a valid manifest, or this says where it is not
    }
    emit(cli, opts, { file, written: rewritten.written, skipped: rewritten.skipped }, () => [
      ...rewritten.written.map((w) => `wrote ${w}`),
      ...rewritten.skipped.map((s) => `left ${s.toolId} ${s.field}: ${s.reason}`),
      `${file}: ${rewritten.written.length} fields written, ${rewritten.skipped.length} left`,
    ]);
    if (rewritten.skipped.length)
      throw new CommandFailed(`${file}: ${rewritten.skipped.length} differences left for a person`);
  });
}
