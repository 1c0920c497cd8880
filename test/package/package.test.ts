// What ships: the packed tarball installed into fresh projects the three ways users install it (without the
// optional @temporalio/ai-sdk peer, with --omit=dev as the Dockerfile does, and with the peer), each resolving one
// copy of every @temporalio package and running a worker of the project's own with one governed call against the
// suite's dev server (its workflows bundled by Temporal's bundler from the installed toolplane/workflow: nothing
// Node-only behind it). With the peer, the consumer type-checks and the CLI lists, describes, shows and replays
// that workflow's run as it does an agentRun's.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { docPages, fencedSamples } from '../support/doc-pages';
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

/** How many TypeScript samples each page holds: a sample moved to another page, or lost, shows here. */
const TS_SAMPLES: Record<string, number> = {
  'README.md': 3, // the worked example: tools.ts, worker.ts, workflows.ts
  'docs/blob-store.md': 1,
  'docs/durable-call.md': 1,
  'docs/ledger.md': 1,
  'docs/worker-versioning.md': 1,
};

/**
 * The versions a consumer installs beside toolplane: the @temporalio/ai-sdk version docs/ai-sdk.md says
 * toolplane is tested with, read from the page, which toolplane's own @temporalio packages pin too.
 */
const TEMPORAL = ((): string => {
  const page = fs.readFileSync(path.join(root, 'docs', 'ai-sdk.md'), 'utf8');
  const named = /`@temporalio\/ai-sdk` is an optional peer \(tested with (\d+\.\d+\.\d+)/.exec(page)?.[1];
  if (!named) throw new Error('docs/ai-sdk.md no longer names the @temporalio/ai-sdk version toolplane is tested with');
  return named;
})();
const BESIDE = [
  `@temporalio/worker@${TEMPORAL}`,
  `@temporalio/client@${TEMPORAL}`,
  `@temporalio/workflow@${TEMPORAL}`,
  // The consumer's tools define their input with zod (defineTool), a dependency of its own.
  'zod@4.6.7',
];
const BUILD_TOOLS = ['typescript@5.9.3', '@types/node@20.19.43'];
/** What loads a TypeScript tool module for `toolplane manifest schemas --tools ./tools.ts` (a project's own dev dependency). */
const TSX = 'tsx@4.23.15';
/** toolplane/ai-sdk is for workflows that call the AI SDK through @temporalio/ai-sdk, its optional peer. */
const AI_SDK_PEER = `@temporalio/ai-sdk@${TEMPORAL}`;
const npmInstall = (dir: string, extra: string[]) =>
  run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', ...extra], dir);

/** Packs the package once for every install mode; checks what ships. */
function packOnce(): () => string {
  let tarball: string | undefined;
  return () => {
    if (tarball) return tarball;
    const dir = testDir('packed');
    const packed = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', dir], root)) as {
      filename: string;
      files: { path: string }[];
      size: number;
    }[];
    const files = packed[0]!.files.map((f) => f.path);
    console.log(`packed ${packed[0]!.filename}: ${files.length} files, ${Math.round(packed[0]!.size / 1024)} KiB`);
    // Nothing but the build, the bin's launcher, the manifest's JSON Schema, the README and the docs pages it links
    // (the manifest's reference among them), and package.json ships.
    const beside = ['bin/toolplane.js', 'manifest.schema.json', ...docPages(), 'package.json'];
    expect(files.filter((f) => !f.startsWith('lib/') && !beside.includes(f))).toEqual([]);
    expect(files).toEqual(expect.arrayContaining(beside));
    // No tests, benchmarks or TypeScript sources (docs/testing.md is a page, not a test).
    const code = files.filter((f) => !beside.includes(f));
    expect(code.some((f) => /test|bench|\.ts$/.test(f) && !f.endsWith('.d.ts'))).toBe(false);
    tarball = path.join(dir, packed[0]!.filename);
    return tarball;
  };
}
const tarball = packOnce();

/** A fresh project holding the consumer example's sources (without its AI SDK module where the peer is absent). */
function consumerProject(name: string, withAiSdk: boolean): string {
  const dir = testDir(name);
  for (const f of fs.readdirSync(consumerSource))
    if (withAiSdk || f !== 'ai-sdk-tools.ts') fs.copyFileSync(path.join(consumerSource, f), path.join(dir, f));
  return dir;
}

/** Every installed copy of a package in the project (npm's own view): one means npm deduplicated it. */
function copiesOf(dir: string, pkg: string): string[] {
  const r = spawnSync('npm', ['ls', pkg, '--all', '--parseable'], { cwd: dir, encoding: 'utf8' });
  return [...new Set(r.stdout.split('\n').filter((l) => l.endsWith(path.join('node_modules', pkg))))];
}

/** What every install mode must give: the entry points load, one copy of each Temporal package, one governed call. */
function loadsAndGoverns(dir: () => string): void {
  it("loads every entry point and the CLI's worker command", () => {
    const probe = `for (const m of ['toolplane', 'toolplane/workflow', 'toolplane/client']) require(m); console.log('loaded');`;
    expect(run('node', ['-e', probe], dir()).trim()).toBe('loaded');
    const cli = path.join(dir(), 'node_modules', '.bin', 'toolplane');
    expect(run(cli, ['worker', '--help'], dir())).toContain('--manifest');
  });

  it('resolves one copy of @temporalio/proto, worker, workflow and common', () => {
    for (const pkg of ['@temporalio/proto', '@temporalio/worker', '@temporalio/workflow', '@temporalio/common'])
      expect([pkg, copiesOf(dir(), pkg).length]).toEqual([pkg, 1]);
  });

  it("runs the consumer's own worker and workflow: one governed call lands, an undeclared tool is refused", () => {
    const out = JSON.parse(
      run('node', ['dist/main.js'], dir(), { TEMPORAL_ADDRESS: testAddress() }).trim().split('\n').at(-1)!,
    ) as ConsumerRun;
    expect(out.saved).toEqual(['hello']);
    expect(out.result[1]).toMatch(/unreachable/);
    expect(out.result[2].map((e) => [e.toolId, e.outcome])).toEqual([
      ['tool://notes/save', 'ok'],
      ['tool://notes/delete_all', 'refused'],
    ]);
  }, 180_000);
}

interface ConsumerRun {
  workflowId: string;
  result: [unknown, string, { toolId: string; outcome: string }[]];
  saved: string[];
  effects: number;
}

describe("the README's install line", () => {
  it('installs the tarball npm pack writes, beside the Temporal packages at the version the docs name, until it is published', () => {
    const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
    const install = /^npm install (\S+\.tgz) (.+)$/m.exec(readme);
    expect(install).not.toBeNull();
    expect(path.basename(install![1]!)).toBe(path.basename(tarball()));
    expect(install![2]!.split(' ')).toEqual(expect.arrayContaining(BESIDE.slice(0, 3)));
    expect(readme).toMatch(/\(cd toolplane && npm ci && npm pack\)/);
    expect(readme).toContain('Once it is published, the first two lines are `npm install toolplane`');
  });
});

describe('the packed package, installed without the optional @temporalio/ai-sdk peer', () => {
  let dir = '';
  beforeAll(() => {
    dir = consumerProject('consumer-no-peer', false);
    npmInstall(dir, [tarball(), ...BUILD_TOOLS, ...BESIDE]);
    expect(fs.existsSync(path.join(dir, 'node_modules', '@temporalio', 'ai-sdk'))).toBe(false);
    run(path.join(dir, 'node_modules', '.bin', 'tsc'), ['-p', '.'], dir);
  }, 300_000);

  loadsAndGoverns(() => dir);

  it('manifest schemas reads the compiled tools, and names tsx for a TypeScript module where it is not installed', () => {
    const cli = path.join(dir, 'node_modules', '.bin', 'toolplane');
    expect(run(cli, ['manifest', 'schemas', '--tools', 'dist/tools.js', '--manifest', 'manifest.yaml'], dir)).toMatch(
      /every implementation matches its declaration \(\d+ tools\)/,
    );
    expect(fs.existsSync(path.join(dir, 'node_modules', 'tsx'))).toBe(false);
    const ts = runFailing(cli, ['manifest', 'schemas', '--tools', './tools.ts'], dir, {});
    expect(ts.status).toBe(2);
    expect(ts.stderr).toContain('./tools.ts is TypeScript, which toolplane loads through tsx');
    expect(ts.stderr).toContain('npm install --save-dev tsx');
  });

  it('compiled, ships to the --omit=dev project below', () => {
    expect(fs.existsSync(path.join(dir, 'dist', 'main.js'))).toBe(true);
    omitDevDist.push(path.join(dir, 'dist'));
  });
});

/** The no-peer project's build, which the --omit=dev project runs (it has no TypeScript to build with). */
const omitDevDist: string[] = [];

describe("the packed package, installed with --omit=dev as the Dockerfile's image does", () => {
  let dir = '';
  beforeAll(() => {
    dir = consumerProject('consumer-omit-dev', false);
    const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as Record<string, unknown>;
    const spec = (s: string) => [s.slice(0, s.lastIndexOf('@')), s.slice(s.lastIndexOf('@') + 1)];
    pkg.dependencies = Object.fromEntries([['toolplane', `file:${tarball()}`], ...BESIDE.map(spec)]);
    pkg.devDependencies = Object.fromEntries(BUILD_TOOLS.map(spec));
    fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify(pkg, null, 2));
    npmInstall(dir, ['--omit=dev']);
    // Really without development packages: toolplane's own devDependencies and the project's are absent.
    for (const dev of ['typescript', 'jest', '@temporalio/testing'])
      expect([dev, fs.existsSync(path.join(dir, 'node_modules', dev))]).toEqual([dev, false]);
    const built = omitDevDist[0] ?? path.join(testDir('unbuilt'), 'dist');
    fs.cpSync(built, path.join(dir, 'dist'), { recursive: true });
  }, 300_000);

  loadsAndGoverns(() => dir);
});

describe('the packed package, installed with the @temporalio/ai-sdk peer', () => {
  let dir = '';

  beforeAll(() => {
    dir = consumerProject('consumer', true);
    npmInstall(dir, [tarball(), ...BUILD_TOOLS, ...BESIDE, AI_SDK_PEER, TSX]);
  }, 300_000);

  it('installs @temporalio/ai-sdk at the version docs/ai-sdk.md names, the version toolplane pins its Temporal packages to', () => {
    const version = (pkg: string, from: string) =>
      (JSON.parse(fs.readFileSync(path.join(from, 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string })
        .version;
    expect(version('@temporalio/ai-sdk', dir)).toBe(TEMPORAL);
    const own = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    for (const [name, range] of Object.entries(own.dependencies))
      if (name.startsWith('@temporalio/')) expect([name, range]).toEqual([name, TEMPORAL]);
    expect(own.devDependencies['@temporalio/ai-sdk']).toBe(TEMPORAL);
    // jose, which the identity code imports, is a dependency of toolplane's own (not only of the MCP SDK).
    expect(own.dependencies.jose).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('type-checks a consumer importing all four entry points, and the code samples of the README and the docs pages', () => {
    // Every ```ts fence is a sample that must compile against the installed package (```typescript marks a fragment).
    const found = Object.fromEntries(
      docPages()
        .map((page) => [page, fencedSamples(page, 'ts')] as const)
        .filter(([, samples]) => samples.length > 0),
    );
    expect(Object.fromEntries(Object.entries(found).map(([page, s]) => [page, s.length]))).toEqual(TS_SAMPLES);
    for (const [page, samples] of Object.entries(found))
      samples.forEach((code, i) =>
        fs.writeFileSync(path.join(dir, `sample-${path.basename(page, '.md').toLowerCase()}-${i}.ts`), code),
      );
    run(path.join(dir, 'node_modules', '.bin', 'tsc'), ['-p', '.'], dir);
    expect(fs.existsSync(path.join(dir, 'dist', 'main.js'))).toBe(true);
  }, 120_000);

  loadsAndGoverns(() => dir);

  it("manifest schemas reads the TypeScript tools (through the project's tsx) and their compiled JavaScript", () => {
    const cli = path.join(dir, 'node_modules', '.bin', 'toolplane');
    for (const tools of ['./tools.ts', './tools', 'dist/tools.js'])
      expect([tools, run(cli, ['manifest', 'schemas', '--tools', tools, '--manifest', 'manifest.yaml'], dir)]).toEqual([
        tools,
        expect.stringMatching(/every implementation matches its declaration \(\d+ tools\)/),
      ]);
  });

  it("the CLI lists, describes, shows and replays the run of the consumer's own workflow", async () => {
    const out = JSON.parse(
      run('node', ['dist/main.js'], dir, { TEMPORAL_ADDRESS: testAddress() }).trim().split('\n').at(-1)!,
    ) as ConsumerRun;
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
