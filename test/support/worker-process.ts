// Real worker processes for the fault tests: spawned as `node --import tsx worker.ts`, killed for real.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Manifest } from '../../catalog/manifest';
import { testAddress } from './env';

const root = path.resolve(__dirname, '..', '..');

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

export function spawnWorker(opts: { manifestFile: string; taskQueue: string; storeDir: string; killAt?: string; tools?: string[]; env?: Record<string, string> }): WorkerProcess {
  const args = ['--import', 'tsx', path.join(root, 'worker.ts'), '--manifest', opts.manifestFile, '--task-queue', opts.taskQueue, '--address', testAddress()];
  for (const t of opts.tools ?? [path.join(root, 'examples', 'support-desk', 'tools')]) args.push('--tools', t);
  const env: NodeJS.ProcessEnv = { ...process.env, TOOLPLANE_STORE_DIR: opts.storeDir, TOOLPLANE_WORKFLOW_BUNDLE: process.env.TOOLPLANE_TEST_BUNDLE, TOOLPLANE_STICKY_TIMEOUT: '1s', ...opts.env };
  delete env.TOOLPLANE_KILL_AT;
  if (opts.killAt) env.TOOLPLANE_KILL_AT = opts.killAt;
  const child = spawn(process.execPath, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
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
