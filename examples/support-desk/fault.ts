// Fault injection for the crash tests: the worker kills itself with SIGKILL at a named point.
export type FaultPoint = 'before_call' | 'after_commit' | 'during_reconcile';

export function faultPoint(point: FaultPoint): void {
  if (process.env.TOOLPLANE_KILL_AT === point) {
    process.stderr.write(`[fault] SIGKILL at ${point} (pid ${process.pid})\n`);
    process.kill(process.pid, 'SIGKILL');
  }
}
