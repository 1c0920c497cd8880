// Workflow-safe entry point of the toolplane CLI worker: the workflows it registers. Every one of
// them goes through the worker's authority and the same gate.
export { agentRun } from './agent/run';
export { mcpSession } from './mcp/session';
export { toolRun } from './tool-run';
export { delegatedCall } from './delegated-call';
export { budgetCounter } from './budget/counter';
