/**
 * Workflow-safe entry point (toolplane/ai-sdk): for workflows that run the AI SDK's `generateText`
 * with @temporalio/ai-sdk. Import it from workflow code, on a worker with @temporalio/ai-sdk's
 * `AiSdkPlugin` (whose bundler settings let `ai` load in the workflow sandbox).
 *
 * @module toolplane/ai-sdk
 */
export {
  governedTools,
  type GovernedTools,
  type GovernedToolsOptions,
  type RefusedToolResult,
} from './workflows/ai-sdk-tools';
export { governedModel, type GovernedModelOptions } from './workflows/ai-sdk-model';
