/**
 * One process of the cluster (PostgreSQL, a Temporal service, the UI): started, SIGKILLed and
 * restarted on demand, its output appended to a log file. Each runs in its own process group, so
 * a kill takes everything it spawned with it (PostgreSQL's backends die with its postmaster).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';

export interface ProcessSpec {
  name: string;
  command: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  logFile: string;
  /** Run as this user (PostgreSQL refuses to run as root). */
  uid?: number;
  gid?: number;
}

export type Exit = { code: number | null; signal: NodeJS.Signals | null };

/** Every process group started here, killed when this process exits however it exits. */
const live = new Set<ManagedProcess>();
let exitHookInstalled = false;
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const p of live) p.killNow('SIGKILL');
  });
}

/**
 * Stops every process started here and still running (services first, PostgreSQL last): for a
 * signal that arrives while the cluster is still starting.
 */
export async function stopAllProcesses(): Promise<void> {
  const all = [...live];
  await Promise.all(all.filter((p) => p.name !== 'postgres').map((p) => p.stop()));
  await Promise.all(all.filter((p) => p.name === 'postgres').map((p) => p.stop(30_000)));
}

export class ManagedProcess {
  private child?: ChildProcess;
  private exitedWith?: Exit;
  private exitPromise: Promise<Exit> = Promise.resolve({ code: 0, signal: null });

  constructor(readonly spec: ProcessSpec) {
    installExitHook();
  }

  get name(): string {
    return this.spec.name;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return this.child !== undefined && this.exitedWith === undefined;
  }

  /** How the last run ended, if it did. */
  get exit(): Exit | undefined {
    return this.exitedWith;
  }

  start(): void {
    if (this.running) return;
    const { spec } = this;
    const out = fs.openSync(spec.logFile, 'a');
    fs.writeSync(out, `\n==== ${new Date().toISOString()} start ${spec.command} ${spec.args.join(' ')}\n`);
    const child = spawn(spec.command, spec.args, {
      cwd: spec.cwd,
      env: spec.env ?? process.env,
      stdio: ['ignore', out, out],
      detached: true,
      uid: spec.uid,
      gid: spec.gid,
    });
    fs.closeSync(out);
    this.child = child;
    this.exitedWith = undefined;
    live.add(this);
    this.exitPromise = new Promise<Exit>((resolve) => {
      child.on('error', (err) => {
        fs.appendFileSync(spec.logFile, `spawn failed: ${err.message}\n`);
        this.exitedWith = { code: 127, signal: null };
        live.delete(this);
        resolve(this.exitedWith);
      });
      child.on('exit', (code, signal) => {
        this.exitedWith = { code, signal };
        live.delete(this);
        resolve(this.exitedWith);
      });
    });
  }

  /** Resolves when the current run ends. */
  exited(): Promise<Exit> {
    return this.exitPromise;
  }

  killNow(signal: NodeJS.Signals): void {
    const pid = this.child?.pid;
    if (!pid || !this.running) return;
    try {
      process.kill(-pid, signal); // the whole group
    } catch {
      try {
        this.child?.kill(signal);
      } catch {
        // already gone
      }
    }
  }

  /** SIGKILL, and wait until it is gone. */
  async kill(): Promise<void> {
    if (!this.running) return;
    this.killNow('SIGKILL');
    await this.exitPromise;
  }

  /** SIGTERM, then SIGKILL after `graceMs`. */
  async stop(graceMs = 10_000): Promise<void> {
    if (!this.running) return;
    this.killNow('SIGTERM');
    const timer = setTimeout(() => this.killNow('SIGKILL'), graceMs);
    await this.exitPromise;
    clearTimeout(timer);
  }

  tail(lines = 20): string {
    try {
      return fs.readFileSync(this.spec.logFile, 'utf8').split('\n').slice(-lines).join('\n');
    } catch {
      return '';
    }
  }
}

/** A TCP port answers . */
export function portOpen(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ port, host });
    s.setTimeout(1000);
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
    s.once('timeout', () => {
      s.destroy();
      resolve(false);
    });
  });
}
