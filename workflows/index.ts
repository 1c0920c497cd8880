// Workflow-safe entry point: the worker bundles this file; nothing here may touch Node or I/O.
export { agentRun } from './agent-run';
export { toolRun } from './tool-run';
