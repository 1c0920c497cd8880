// Extension processes: started lazily, one per plugin, stopped when idle, restarted after a crash.
import { durationMs, serverOf, type Manifest, type ServerDecl, type ToolDecl } from '../../catalog/manifest';
import { connectMcp, type McpConnection } from '../mcp/connection';
import { compareListing, SourceDrift } from '../mcp/mcp-tools';
import { ErrorCode } from '../../catalog/error-codes';
import { ToolplaneError } from '../../catalog/errors';

type ExtensionDecl = Extract<ServerDecl, { kind: 'extension' }>;

interface Running {
  conn: McpConnection;
  start: ExtensionStart;
  idle?: NodeJS.Timeout;
}

export interface ExtensionStart {
  plugin: string;
  pid?: number;
  ms: number;
}

export class ExtensionManager {
  private readonly running = new Map<string, Running>();
  private readonly starting = new Map<string, Promise<Running>>();
  /** Every start, in order: what a run's extension use cost. */
  readonly starts: ExtensionStart[] = [];

  constructor(
    private readonly manifest: Manifest,
    private readonly log: (line: string) => void = (l) => process.stderr.write(`${l}\n`),
  ) {}

  private decl(plugin: string): ExtensionDecl {
    const d = this.manifest.servers[plugin];
    if (d?.kind !== 'extension')
      throw new ToolplaneError(ErrorCode.ExtensionUndeclared, `no extension "${plugin}" is declared`, { plugin });
    return d;
  }

  isRunning(plugin: string): boolean {
    return this.running.has(plugin);
  }

  /** The plugin's connection, starting only that extension if it is not running. */
  async acquire(plugin: string): Promise<{ conn: McpConnection; started?: ExtensionStart }> {
    const existing = this.running.get(plugin);
    if (existing) {
      this.touch(plugin, existing);
      return { conn: existing.conn };
    }
    // Concurrent first calls share one start; only the call that began it reports it.
    const joined = this.starting.get(plugin);
    const pending = joined ?? this.start(plugin);
    if (!joined) {
      this.starting.set(plugin, pending);
      pending.finally(() => this.starting.delete(plugin)).catch(() => {});
    }
    const r = await pending;
    this.touch(plugin, r);
    return { conn: r.conn, started: joined ? undefined : r.start };
  }

  private async start(plugin: string): Promise<Running> {
    const decl = this.decl(plugin);
    const t0 = performance.now();
    const conn = await connectMcp(decl, { name: `ext:${plugin}`, stderr: (l) => this.log(`[ext:${plugin}] ${l}`) });
    // Equal by construction to the catalogue record; a process that serves something else is refused.
    const decls: ToolDecl[] = this.manifest.tools.filter((t) => serverOf(t.id) === plugin);
    const { drift } = compareListing((await conn.client.listTools()).tools, decls);
    if (drift.length > 0) {
      await conn.close();
      throw new SourceDrift(plugin, drift);
    }
    const start: ExtensionStart = { plugin, pid: conn.pid, ms: Math.round(performance.now() - t0) };
    const running: Running = { conn, start };
    conn.onClose(() => {
      if (this.running.get(plugin) === running) {
        this.running.delete(plugin);
        if (running.idle) clearTimeout(running.idle);
        this.log(`[ext:${plugin}] stopped`);
      }
    });
    this.running.set(plugin, running);
    this.starts.push(start);
    this.log(`[ext:${plugin}] started (pid ${conn.pid}, ${start.ms} ms)`);
    return running;
  }

  private touch(plugin: string, r: Running): void {
    if (r.idle) clearTimeout(r.idle);
    r.idle = setTimeout(() => void this.stop(plugin), durationMs(this.decl(plugin).idle_timeout));
    r.idle.unref();
  }

  async stop(plugin: string): Promise<void> {
    const r = this.running.get(plugin);
    if (!r) return;
    this.running.delete(plugin);
    if (r.idle) clearTimeout(r.idle);
    await r.conn.close().catch(() => {});
    this.log(`[ext:${plugin}] stopped (idle)`);
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.running.keys()].map((p) => this.stop(p)));
  }
}
