// What the host declares as the principal's request for an MCP call (`Toolplane-Request`), read the same
// by the gateway and the session's workflow: any JSON value counts as the principal's words, and an
// object with a `tools` list of tool ids also names the actions the principal asked for, as a run's
// `grants` name them for agentRun.

/** The tool ids a declared request names (`{ "tools": ["tool://…"], … }`); none for any other value. */
export function requestedTools(given: unknown): string[] {
  if (typeof given !== 'object' || given === null || Array.isArray(given)) return [];
  const tools = (given as { tools?: unknown }).tools;
  if (!Array.isArray(tools)) return [];
  return tools.filter((t): t is string => typeof t === 'string');
}
