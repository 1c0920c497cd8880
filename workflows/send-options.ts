// Workflow-safe: the activity options every send of one tool shares, read from its declaration.
import type { ActivityOptions } from '@temporalio/workflow';
import { durationMs } from '../catalog/duration';
import type { ToolDecl } from '../catalog/manifest';
import { activityRetry } from './recovery-policy';

/**
 * What every send of a tool schedules alike, read from its declaration once per run: its timeouts and
 * retry policy in milliseconds (the values Temporal would parse from the manifest's duration strings).
 */
type SendOptions = Pick<ActivityOptions, 'startToCloseTimeout' | 'heartbeatTimeout' | 'retry'>;
const sendOptions = new WeakMap<ToolDecl, SendOptions>();

export function sendOptionsOf(decl: ToolDecl): SendOptions {
  let o = sendOptions.get(decl);
  if (o) return o;
  o = { startToCloseTimeout: durationMs(decl.timeouts.start_to_close), retry: activityRetry(decl) };
  if (decl.timeouts.heartbeat !== undefined) o.heartbeatTimeout = durationMs(decl.timeouts.heartbeat);
  sendOptions.set(decl, o);
  return o;
}
