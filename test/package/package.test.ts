// What ships: the packed tarball installed into a fresh project, type-checked, and a worker of that
// project's own running one governed call against the suite's dev server (its workflows bundled by
// Temporal's bundler from the installed toolplane/workflow: nothing Node-only behind it); the CLI works there,
// and lists, describes, shows and replays that workflow's run as it does an agentRun's.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { testAddress, testDir } from '../support/env';
import { waitFor } from '../support/wait';

const root = path.resolve(__dirname, '..', '..');
const consumerSource = path.join(root, 'examples', 'consumer');
const run = (cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): string =>
  execFileSync(cmd, args, {
    cwd,
    env: { ...process.env, ...env },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 64 * 1024 * 1024,
  });

/** A command expected to fail: its exit status and standard error. */
function runFailing(
  cmd: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
): { status: number; stderr: string } {
  const r = spawnSync(cmd, args, { cwd, env: { ...process.env, ...env }, encoding: 'utf8' });
  return { status: r.status ?? -1, stderr: r.stderr };
}

describe('the packed package, installed by a consumer', () => {
  const dir = testDir('consumer');
  let tarball: string;

  beforeAll(() => {
    const packed = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', dir], root)) as {
      filename: string;
      files: { path: string }[];
      size: number;
    }[];
    tarball = path.join(dir, packed[0]!.filename);
    const files = packed[0]!.files.map((f) => f.path);
    console.log(`packed ${packed[0]!.filename}: ${files.length} files, ${Math.round(packed[0]!.size / 1024)} KiB`);
    // Nothing but the build, the bin's launcher, the manifest's JSON Schema and reference, the README and package.json ships.
    const beside = ['bin/toolplane.js', 'manifest.schema.json', 'docs/manifest.md', 'README.md', 'package.json'];
    expect(files.filter((f) => !f.startsWith('lib/') && !beside.includes(f))).toEqual([]);
    expect(files).toEqual(expect.arrayContaining(['manifest.schema.json', 'docs/manifest.md']));
    expect(files.some((f) => /test|bench|\.ts$/.test(f) && !f.endsWith('.d.ts'))).toBe(false);
    for (const f of fs.readdirSync(consumerSource)) fs.copyFileSync(path.join(consumerSource, f), path.join(dir, f));
    run(
      'npm',
      [
        'install',
        '--no-audit',
        '--no-fund',
        '--prefer-offline',
        tarball,
        'typescript@5.9.3',
        '@types/node@20.19.43',
        '@temporalio/worker@1.24.0',
        '@temporalio/client@1.24.0',
        '@temporalio/workflow@1.24.0',
        // toolplane/ai-sdk is for workflows that call the AI SDK through @temporalio/ai-sdk, its optional peer.
        '@temporalio/ai-sdk@1.23.0',
        // The consumer's tools define their input with zod (defineTool), a dependency of its own.
        'zod@4.6.7',
      ],
      dir,
    );
  }, 300_000);

  it("type-checks a consumer importing all four entry points, and the README's code samples", () => {
    const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
    const samples = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
    expect(samples.length).toBeGreaterThanOrEqual(3);
    samples.forEach((code, i) => fs.writeFileSync(path.join(dir, `readme-${i}.ts`), code));
    run(path.join(dir, 'node_modules', '.bin', 'tsc'), ['-p', '.'], dir);
    expect(fs.existsSync(path.join(dir, 'dist', 'main.js'))).toBe(true);
  }, 120_000);

  it("runs the consumer's own worker and workflow: one governed call lands, an undeclared tool is refused; the CLI lists, describes, shows and replays the run", async () => {
    const out = JSON.parse(
      run('node', ['dist/main.js'], dir, { TEMPORAL_ADDRESS: testAddress() }).trim().split('\n').at(-1)!,
    ) as {
      workflowId: string;
      result: [unknown, string, { toolId: string; outcome: string }[]];
      saved: string[];
      effects: number;
    };
    expect(out.saved).toEqual(['hello']);
    expect(out.result[1]).toMatch(/unreachable/);
    expect(out.result[2].map((e) => [e.toolId, e.outcome])).toEqual([
      ['tool://notes/save', 'ok'],
      ['tool://notes/delete_all', 'refused'],
    ]);

    const cli = path.join(dir, 'node_modules', '.bin', 'toolplane');
    expect(run(cli, ['--help'], dir)).toContain('Durable, governed tool calls');
    const env = { TEMPORAL_ADDRESS: testAddress() };
    const shown = run(cli, ['show', out.workflowId], dir, env);
    expect(shown).toContain('tool://notes/save');

    // The consumer's own workflow is operated like agentRun: it labelled itself with the principal the
    // worker granted it, so `list` finds it (visibility is eventually consistent: polled).
    type Row = { workflowId: string; type: string; principal?: string; refusals: number; manifestDigest?: string };
    const listed = await waitFor('the run in toolplane list', 30_000, () =>
      (JSON.parse(run(cli, ['list', '--principal', 'user:team', '--json'], dir, env)) as { runs: Row[] }).runs.find(
        (r) => r.workflowId === out.workflowId,
      ),
    );
    expect(listed).toMatchObject({ type: 'saveTwoNotes', principal: 'user:team', refusals: 1 });
    expect(listed.manifestDigest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(JSON.parse(run(cli, ['describe', out.workflowId, '--json'], dir, env))).toMatchObject({
      type: 'saveTwoNotes',
      status: 'COMPLETED',
      summary: 'Save two notes for user:team',
      principal: 'user:team',
      refusals: 1,
    });

    // Replayed with the consumer's workflows module; toolplane's own workflows cannot replay it, and say so.
    const own = runFailing(cli, ['replay', out.workflowId], dir, env);
    expect(own.status).toBe(2);
    expect(own.stderr).toContain(`${out.workflowId} is a run of saveTwoNotes`);
    expect(own.stderr).toContain('--workflows <module>');
    expect(run(cli, ['replay', out.workflowId, '--workflows', 'dist/workflows.js'], dir, env)).toMatch(
      new RegExp(`^${out.workflowId}: replayed \\d+ events with the current code, no divergence$`, 'm'),
    );
  }, 180_000);

  it('resolves toolplane/manifest.schema.json; manifest init writes a starter whose modeline finds it and that passes manifest check', () => {
    const resolved = run('node', ['-p', "require.resolve('toolplane/manifest.schema.json')"], dir).trim();
    expect(JSON.parse(fs.readFileSync(resolved, 'utf8'))).toEqual(
      JSON.parse(fs.readFileSync(path.join(root, 'manifest.schema.json'), 'utf8')),
    );
    const cli = path.join(dir, 'node_modules', '.bin', 'toolplane');
    expect(run(cli, ['manifest', 'check', 'manifest.yaml'], dir)).toMatch(/ok, \d+ tools/);
    run(cli, ['manifest', 'init', 'starter.yaml'], dir);
    const modeline = /^# yaml-language-server: \$schema=(\S+)$/m.exec(
      fs.readFileSync(path.join(dir, 'starter.yaml'), 'utf8'),
    );
    expect(modeline?.[1]).toBe('./node_modules/toolplane/manifest.schema.json');
    expect(fs.realpathSync(path.join(dir, modeline![1]!))).toBe(fs.realpathSync(resolved));
    expect(run(cli, ['manifest', 'check', 'starter.yaml'], dir)).toMatch(/ok, 1 tools, 1 servers, 0 warnings/);
  });

  it('loads neither the worker SDK, MCP nor the activities for the client, the CLI or toolplane/ai-sdk', () => {
    const probe = `require('toolplane/client'); require('toolplane/package.json');
      const { governedTools } = require('toolplane/ai-sdk');
      if (typeof governedTools !== 'function') throw new Error('toolplane/ai-sdk exports no governedTools');
      const loaded = Object.keys(require.cache);
      console.log(JSON.stringify(loaded.filter((f) => /@temporalio[\\/]worker|@modelcontextprotocol|[\\/]lib[\\/]activities[\\/]/.test(f))));`;
    expect(JSON.parse(run('node', ['-e', probe], dir).trim())).toEqual([]);
  });
});
