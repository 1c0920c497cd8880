// Fault injection for the crash tests: the worker kills itself with SIGKILL at a named point.
import fs from 'node:fs';
import path from 'node:path';

export type FaultPoint = 'before_call' | 'after_commit' | 'during_reconcile';

export function faultPoint(point: FaultPoint): void {
  if (process.env.TOOLPLANE_KILL_AT === point) {
    process.stderr.write(`[fault] SIGKILL at ${point} (pid ${process.pid})\n`);
    process.kill(process.pid, 'SIGKILL');
  }
}

/** For the shutdown test: the tool hangs here and ignores cancellation, as a badly written tool would. */
export async function hangPoint(point: 'lookup'): Promise<void> {
  if (process.env.TOOLPLANE_HANG_AT === point) {
    process.stderr.write(`[fault] hanging at ${point}, ignoring cancellation (pid ${process.pid})\n`);
    await new Promise(() => {});
  }
}

/**
 * For the gateway's fault tests: with TOOLPLANE_HOLD_AT=<point> and TOOLPLANE_HOLD_DIR=<dir>, the tool says it
 * is in flight (the file `<dir>/held-<pid>`) and waits there until the file `<dir>/release` exists, so a test
 * can kill a process while the call is surely in flight and let the call go on afterwards.
 */
export async function holdPoint(point: 'refund'): Promise<void> {
  const dir = process.env.TOOLPLANE_HOLD_DIR;
  if (process.env.TOOLPLANE_HOLD_AT !== point || !dir) return;
  const release = path.join(dir, 'release');
  if (fs.existsSync(release)) return;
  fs.writeFileSync(path.join(dir, `held-${process.pid}`), point);
  process.stderr.write(`[fault] holding at ${point} until ${release} exists (pid ${process.pid})\n`);
  while (!fs.existsSync(release)) await new Promise((resolve) => setTimeout(resolve, 50));
}
