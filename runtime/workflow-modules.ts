// Node-only. Where the toolplane CLI worker's workflow module is; resolved, not imported, so callers load no workflow code.
export const WORKFLOWS_PATH = require.resolve('../workflows/index');

/**
 * Workflow interceptor modules every toolplane bundle includes: the SDK's OpenTelemetry workflow
 * interceptors, so a run is one trace (the run's span, its model turns and tool calls beneath it).
 */
export const WORKFLOW_INTERCEPTOR_MODULES = [
  require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors'),
];

/**
 * Modules every toolplane bundle loads once per reusable V8 context and shares across its workflows
 * (the SDK's `preloadModules`): canonical JSON and SHA-256, with the libraries they use. Pure
 * functions only (a shared module's state would be shared too): every run hashes its effect keys and
 * declarations with code earlier runs already warmed, where a module of each run's own ran cold.
 */
export const WORKFLOW_PRELOAD_MODULES = [require.resolve('../catalog/digest')];
