// `toolplane manifest check | digest | init | schemas`: work with manifests, offline.
import fs from 'node:fs';
import type { Command } from 'commander';
import { manifestDigest, toolDigest } from '../catalog/digest';
import { CatalogError, CatalogErrorCode, type ManifestInvalid, type ManifestProblem } from '../catalog/errors';
import { loadManifest, type LoadedManifest } from '../runtime/manifest-file';
import { CommandFailed, ExitCode, usageError } from './exit-codes';
import { expectedAt, type Expected } from './manifest-expected';
import { registerManifestSchemas } from './manifest-schemas';
import { schemaReference, starterManifest } from './manifest-starter';
import { emit, withJson, type Cli } from './shared';

/** Loads the manifest; an invalid one is reported with the expected shape of each offending node, exit 2. */
function checked(cli: Cli, file: string, opts: { json?: boolean }): LoadedManifest {
  try {
    return loadManifest(file);
  } catch (e) {
    if (!CatalogError.is(e) || e.code !== CatalogErrorCode.ManifestInvalid) throw e;
    const { file: shown, problems } = (e as ManifestInvalid).data!;
    const expected = problems.map((p) => (p.kind === 'shape' ? expectedAt(p.path, p.message) : undefined));
    if (opts.json) {
      const listed = problems.map((p, i) => ({ ...p, ...(expected[i] ? { expected: expected[i] } : {}) }));
      cli.out(JSON.stringify({ file: shown, ok: false, problems: listed }, null, 2));
    } else {
      for (const line of report(shown, problems, expected)) cli.err(line);
    }
    throw new CommandFailed(`${shown}: invalid manifest`, ExitCode.Usage);
  }
}

function report(file: string, problems: ManifestProblem[], expected: (Expected | undefined)[]): string[] {
  const lines = [`${file}: invalid manifest`];
  const shown = new Set<string>();
  problems.forEach((p, i) => {
    lines.push(`  ${file}${p.line ? `:${p.line}` : ''} at ${p.path || '(root)'}: ${p.message}`);
    const shape = expected[i];
    if (!shape || shown.has(shape.at)) return;
    shown.add(shape.at);
    lines.push(`    expected at ${shape.at || '(root)'}:`, ...shape.lines.map((l) => `      ${l}`));
  });
  return lines;
}

export function registerManifest(program: Command, cli: Cli): void {
  const manifest = program.command('manifest').description('work with manifests (offline)');
  withJson(
    manifest
      .command('check <file>')
      .description('validate a manifest and print warnings; an error shows the shape expected where it is'),
  ).action((file: string, opts: { json?: boolean }) => {
    const { manifest: m, warnings } = checked(cli, file, opts);
    const summary = {
      file,
      ok: true,
      tools: m.tools.length,
      servers: Object.keys(m.servers).length,
      warnings,
    };
    emit(cli, opts, summary, () => [
      ...warnings.map((w) => `warning: ${file}${w.line ? `:${w.line}` : ''} at ${w.path}: ${w.message}`),
      `${file}: ok, ${summary.tools} tools, ${summary.servers} servers, ${warnings.length} warnings`,
    ]);
  });
  withJson(manifest.command('digest <file>').description('print the digest of every tool and of the manifest')).action(
    (file: string, opts: { json?: boolean }) => {
      const { manifest: m } = checked(cli, file, opts);
      const tools = Object.fromEntries(m.tools.map((t) => [t.id, toolDigest(t)]));
      emit(cli, opts, { manifest: manifestDigest(m), tools }, () => [
        ...Object.entries(tools).map(([id, d]) => `${d}  ${id}`),
        `${manifestDigest(m)}  (manifest)`,
      ]);
    },
  );
  manifest
    .command('init [file]')
    .description('write a commented starter manifest (default manifest.yaml) with the schema for editors')
    .option('--force', 'overwrite the file if it exists')
    .action((file: string | undefined, opts: { force?: boolean }) => {
      const target = file ?? 'manifest.yaml';
      if (/\.json$/i.test(target)) throw usageError(`manifest init writes YAML; name a .yaml file, not ${target}`);
      try {
        // `wx`: never replace a file that appeared meanwhile, unless --force.
        fs.writeFileSync(target, starterManifest(schemaReference(target)), { flag: opts.force ? 'w' : 'wx' });
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'EEXIST')
          throw usageError(`${target} exists; pass --force to overwrite it`);
        throw e;
      }
      cli.out(`wrote ${target}; check it with: npx toolplane manifest check ${target}`);
    });
  registerManifestSchemas(manifest, cli);
}
