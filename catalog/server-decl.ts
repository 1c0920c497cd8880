// Workflow-safe: the manifest's `servers` section, where a server's tools run, chosen by `kind`.
import { z } from 'zod';
import { duration } from './manifest-fields';

const reconcileTool = z
  .string()
  .optional()
  .describe(
    'A tool on the server that answers "did the call with this idempotency key land?" (`recovery: reconcile`).',
  );

/** How the worker starts a child process (an MCP server over stdio, an extension). */
const childProcess = {
  command: z.string().min(1).describe('The program to start.'),
  args: z.array(z.string()).default([]).describe('Its arguments.'),
  env: z
    .record(z.string(), z.string())
    .optional()
    .describe("Environment variables set for it, on top of the worker's own."),
  cwd: z.string().optional().describe("Its working directory. Absent: the worker's."),
};

export const ServerDecl = z
  .discriminatedUnion('kind', [
    z.strictObject({
      kind: z.literal('in_process').describe("Tools implemented in the worker's own process (TypeScript)."),
      module: z
        .string()
        .optional()
        .describe(
          'A module exporting the tools, relative to the working directory; `toolplane worker` loads it unless given `--tools`. Absent: the tools are passed to the plugin.',
        ),
    }),
    z.strictObject({
      kind: z
        .literal('mcp_stdio')
        .describe('An MCP server the worker starts as a child process and speaks to over stdio, per call.'),
      ...childProcess,
      reconcile_tool: reconcileTool,
    }),
    z.strictObject({
      kind: z.literal('mcp_http').describe('An MCP server reached over Streamable HTTP.'),
      url: z.string().url().describe("The server's MCP endpoint."),
      reconcile_tool: reconcileTool,
    }),
    z.strictObject({
      kind: z
        .literal('extension')
        .describe(
          'A dormant extension process (MCP over stdio) with `ext:` tools: started only when an authorised call needs it and the run holds the extension-runtime capability.',
        ),
      ...childProcess,
      idle_timeout: duration
        .default('60s')
        .describe('How long the started extension may sit unused before it is stopped.'),
      reconcile_tool: reconcileTool,
    }),
  ])
  .describe("Where a server's tools run, chosen by `kind`.");
export type ServerDecl = z.infer<typeof ServerDecl>;
