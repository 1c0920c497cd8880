// The harness's Python side: a venv with agentdojo pinned, made on first use in toolplane's cache
// (beside the Temporal CLI's), and the suite daemon (dojo_server.py daemon) that keeps the suites loaded.
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { ToolplaneError } from '../../catalog/errors';
import { findPython3, pinnedPython, PythonVenvUnavailable } from '../../scripts/python-venv';

/**
 * The PyPI release of AgentDojo; the benchmark versions it carries (`v1` … `v1.2.2`) are its suites'
 * versions, a separate number (`DOJO_VERSION`).
 */
export const AGENTDOJO_PACKAGE = '0.1.35';
export const BENCHMARK_VERSION = 'v1.2.1';
export const DOJO_SERVER = path.resolve(__dirname, 'dojo_server.py');

/** The Python side is missing or failed: what was tried, before any run starts. */
export class DojoUnavailable extends ToolplaneError<'DojoUnavailable', { step: string }> {
  constructor(step: string, why: string) {
    super('DojoUnavailable', `AgentDojo harness: ${step}: ${why}`, { step });
  }
}

/** A suite, version, task or attack that AgentDojo lacks. */
export class DojoBadInput extends ToolplaneError<'DojoBadInput', Record<string, never>> {
  constructor(why: string) {
    super('DojoBadInput', why, {});
  }
}

export { findPython3 };

/** The venv's python with `agentdojo==AGENTDOJO_PACKAGE`, installing it (pip, into a venv) on first use. */
export function agentdojoPython(log: (line: string) => void = () => {}): string {
  try {
    return pinnedPython({ distribution: 'agentdojo', version: AGENTDOJO_PACKAGE, module: 'agentdojo' }, log);
  } catch (err) {
    if (err instanceof PythonVenvUnavailable) throw new DojoUnavailable(err.step, err.message);
    throw err;
  }
}

/** The DOJO_* configuration of one run (dojo_server.py's docstring). */
export interface DojoEnv {
  DOJO_SUITE: string;
  DOJO_VERSION: string;
  DOJO_USER_TASK?: string;
  DOJO_INJECTION_TASK?: string;
  DOJO_ATTACK?: string;
  DOJO_STATE?: string;
  DOJO_MODEL_OUTPUT?: string;
  /** The calls that reached the suite, as JSON, for tasks AgentDojo judges by their traces. */
  DOJO_TRACES?: string;
}

export interface DojoScript {
  prompt: string;
  calls: { function: string; args: Record<string, unknown> }[];
  /** How many of `calls` are the user task's; the rest are the injection task's. */
  userCalls: number;
  answer: string;
  injections: Record<string, string>;
}

export interface DojoVerdict {
  utility: boolean;
  /** Whether the injection task's goal was achieved (AgentDojo's `security()`); null without one. */
  security: boolean | null;
}

/** The undefended reference's verdict: the script applied to the environment directly (no plane). */
export interface DojoReference extends DojoVerdict {
  /** The calls the suite itself rejected (AgentDojo's error text), by position in the script. */
  errors: { call: number; function: string; error: string }[];
}

/** The running suite daemon: one connection, one request at a time. */
export class DojoDaemon {
  private buffered = '';
  private waiting: ((line: string) => void)[] = [];
  private constructor(
    private readonly child: ChildProcess,
    private readonly sock: net.Socket,
    readonly socketPath: string,
  ) {
    sock.on('data', (d) => {
      this.buffered += d.toString('utf8');
      for (let nl = this.buffered.indexOf('\n'); nl >= 0; nl = this.buffered.indexOf('\n')) {
        const line = this.buffered.slice(0, nl);
        this.buffered = this.buffered.slice(nl + 1);
        this.waiting.shift()?.(line);
      }
    });
  }

  static async start(python: string, dir: string, version: string): Promise<DojoDaemon> {
    const socketPath = path.join(dir, 'dojo.sock');
    const child = spawn(python, [DOJO_SERVER, 'daemon'], {
      env: { ...process.env, DOJO_SOCKET: socketPath, DOJO_VERSION: version },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr = (stderr + d.toString()).slice(-4000)));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new DojoUnavailable('daemon', `not ready in 120 s: ${stderr}`)), 120_000);
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new DojoUnavailable('daemon', `exited ${code} before it was ready: ${stderr.trim()}`));
      });
      child.stdout.on('data', (d) => {
        if (String(d).includes('ready')) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    const sock = await new Promise<net.Socket>((resolve, reject) => {
      const s = net.createConnection(socketPath, () => resolve(s));
      s.once('error', reject);
    });
    return new DojoDaemon(child, sock, socketPath);
  }

  private async ask<T>(
    op: 'script' | 'judge' | 'reference' | 'tasks' | 'bind',
    env: DojoEnv,
    slot?: string,
  ): Promise<T> {
    const line = new Promise<string>((r) => this.waiting.push(r));
    this.sock.write(JSON.stringify({ op, env, ...(slot ? { slot } : {}) }) + '\n');
    const out = JSON.parse(await line) as { result?: T; error?: string; input?: boolean };
    if (out.error !== undefined)
      throw out.input ? new DojoBadInput(out.error) : new DojoUnavailable(`dojo_server.py ${op}`, out.error);
    return out.result as T;
  }

  script(env: DojoEnv): Promise<DojoScript> {
    return this.ask('script', env);
  }
  judge(env: DojoEnv): Promise<DojoVerdict> {
    return this.ask('judge', env);
  }
  /** The run a slot's suite server serves from now on (its calls carry only the slot's name). */
  bind(slot: string, env: DojoEnv): Promise<boolean> {
    return this.ask('bind', env, slot);
  }
  /** The undefended reference (dojo_server.py `reference`): what the ground truth itself passes. */
  reference(env: DojoEnv): Promise<DojoReference> {
    return this.ask('reference', env);
  }
  tasks(env: DojoEnv): Promise<{ user: string[]; injection: string[] }> {
    return this.ask('tasks', env);
  }

  async stop(): Promise<void> {
    this.sock.destroy();
    if (this.child.exitCode !== null) return;
    const done = new Promise<void>((r) => this.child.once('exit', () => r()));
    this.child.kill('SIGTERM');
    await done;
  }
}
