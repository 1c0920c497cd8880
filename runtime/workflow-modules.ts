// Node-only. Where the toolplane CLI worker's workflow module is; resolved, not imported, so callers load no workflow code.
export const WORKFLOWS_PATH = require.resolve('../workflows/index');

/**
 * Workflow interceptor modules every toolplane bundle includes: the SDK's OpenTelemetry workflow
 * interceptors, so a run is one trace (the run's span, its model turns and tool calls beneath it).
 */
export const WORKFLOW_INTERCEPTOR_MODULES = [
  require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors'),
];
