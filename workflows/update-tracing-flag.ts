// Workflow-safe: a run whose updates have validators records, in its first workflow task, the SDK flag
// the OpenTelemetry workflow interceptors check when they trace an update
// (`OpenTelemetryInterceptorsInstrumentsAllMethods`). The SDK records a flag in the first task that
// uses it. When that task is the speculative one of an update its validator rejects, the server drops
// it and the flag with it, while the worker believes it recorded: the next accepted update is traced
// live but not on replay, and after a restart every task of the run fails with TMPRL1100 (measured:
// test/integration/rejected-decisions.test.ts, a forged token batch as the run's first update). The
// first task is never speculative, so the flag it records stays. On replay the check only reads what
// history holds, so an older history replays as it ran.
//
// The SDK has no public way to record a flag: this reads it through the SDK's own activator, as its
// interceptors do. A later SDK that renames either fails the workflow bundle's type check.
import { SdkFlags } from '@temporalio/workflow/lib/flags';
import { getActivator } from '@temporalio/workflow/lib/global-attributes';

/** Records the update-tracing flag in the current (first) workflow task, before any validator can reject. */
export function recordUpdateTracingFlag(): void {
  getActivator().hasFlag(SdkFlags.OpenTelemetryInterceptorsInstrumentsAllMethods);
}
