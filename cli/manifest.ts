// `toolplane manifest check | digest | schemas`: work with manifests, offline.
import type { Command } from 'commander';
import { manifestDigest, toolDigest } from '../catalog/digest';
import { loadManifest } from '../runtime/manifest-file';
import { registerManifestSchemas } from './manifest-schemas';
import { emit, withJson, type Cli } from './shared';

export function registerManifest(program: Command, cli: Cli): void {
  const manifest = program.command('manifest').description('work with manifests (offline)');
  withJson(manifest.command('check <file>').description('validate a manifest and print warnings')).action(
    (file: string, opts: { json?: boolean }) => {
      const { manifest: m, warnings } = loadManifest(file);
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
    },
  );
  withJson(manifest.command('digest <file>').description('print the digest of every tool and of the manifest')).action(
    (file: string, opts: { json?: boolean }) => {
      const { manifest: m } = loadManifest(file);
      const tools = Object.fromEntries(m.tools.map((t) => [t.id, toolDigest(t)]));
      emit(cli, opts, { manifest: manifestDigest(m), tools }, () => [
        ...Object.entries(tools).map(([id, d]) => `${d}  ${id}`),
        `${manifestDigest(m)}  (manifest)`,
      ]);
    },
  );
  registerManifestSchemas(manifest, cli);
}
