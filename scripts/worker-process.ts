// Real worker processes for the fault tests and the chaos campaign: `node --import tsx cli/worker-run.ts`,
// one process, so a SIGKILL kills the worker and nothing survives it.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Manifest } from '../catalog/manifest';

const root = path.resolve(__dirname, '..');

export interface WorkerProcess {
  child: ChildProcess;
  pid: number;
  /** Resolves with how the process ended. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output(): string;
  stop(): Promise<void>;
}

export function writeManifest(dir: string, manifest: Manifest, name = 'manifest.json'): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, JSON.stringify(manifest, null, 2));
  return file;
}

export interface SpawnOptions {
  address: string;
  manifestFile: string;
  taskQueue: string;
  storeDir: string;
  /** A prebuilt workflow bundle, so the worker starts in about a second. */
  workflowBundle?: string;
  killAt?: string;
  tools?: string[];
  env?: Record<string, string>;
  /** More `toolplane worker` flags, such as `--deployment-name`. */
  args?: string[];
}

export function spawnWorker(opts: SpawnOptions): WorkerProcess {
  const args = [
    '--import',
    'tsx',
    path.join(root, 'cli', 'worker-run.ts'),
    '--allow-ungoverned-tool-run',
    '--manifest',
    opts.manifestFile,
    '--task-queue',
    opts.taskQueue,
    '--address',
    opts.address,
  ];
  for (const t of opts.tools ?? [path.join(root, 'examples', 'support-desk', 'tools')]) args.push('--tools', t);
  args.push(...(opts.args ?? []));
  const env: Record<string, string> = { ...opts.env };
  if (opts.workflowBundle) env.TOOLPLANE_WORKFLOW_BUNDLE = opts.workflowBundle;
  if (opts.killAt) env.TOOLPLANE_KILL_AT = opts.killAt;
  return spawnNode(args, opts.storeDir, env);
}

/**
 * A child process of node running `args` from the project's root with the suite's store and a short sticky
 * timeout; fault hooks inherited from this process are dropped (only `env` sets them). One process, so a
 * SIGKILL leaves nothing behind. `stop()` asks with SIGTERM, and kills after ten seconds.
 */
export function spawnNode(args: string[], storeDir: string, env: Record<string, string> = {}): WorkerProcess {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, TOOLPLANE_STORE_DIR: storeDir, TOOLPLANE_STICKY_TIMEOUT: '1s' };
  for (const name of ['TOOLPLANE_KILL_AT', 'TOOLPLANE_HOLD_AT', 'TOOLPLANE_HOLD_DIR']) delete childEnv[name];
  Object.assign(childEnv, env);
  const child = spawn(process.execPath, args, { cwd: root, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    pid: child.pid!,
    exited,
    output: () => out,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(timer);
      }
    },
  };
}
