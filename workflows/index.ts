// Workflow-safe entry point: the worker bundles this file; nothing here may touch Node or I/O.
export { toolRun } from './tool-run';
