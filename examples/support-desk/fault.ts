// Fault injection for the crash tests: the worker kills itself with SIGKILL at a named point.
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
