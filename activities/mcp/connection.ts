// One MCP connection: stdio (a command) or Streamable HTTP (a URL), through the MCP SDK.
import readline from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { ServerDecl } from '../../catalog/manifest';

/** The SDK's default of 10 MiB per message is below what a large tool result needs; those go to the blob store. */
export const MAX_STDIO_MESSAGE_BYTES = 64 * 1024 * 1024;

export type McpServerDecl = Extract<ServerDecl, { kind: 'mcp_stdio' | 'mcp_http' | 'extension' }>;

export interface McpConnection {
  client: Client;
  /** The server process, for stdio servers. */
  pid?: number;
  /** Called when the server goes away (exit, crash, closed connection). */
  onClose(fn: () => void): void;
  close(): Promise<void>;
}

export async function connectMcp(
  server: McpServerDecl,
  opts: { name: string; stderr?: (line: string) => void },
): Promise<McpConnection> {
  const client = new Client({ name: 'toolplane', version: '0.1.0' });
  const closers: (() => void)[] = [];
  if (server.kind === 'mcp_http') {
    const transport = new StreamableHTTPClientTransport(new URL(server.url));
    transport.onclose = () => closers.forEach((f) => f());
    await client.connect(transport);
    return { client, onClose: (f) => closers.push(f), close: () => client.close() };
  }
  const env = Object.fromEntries(
    Object.entries({ ...process.env, ...server.env }).filter((e): e is [string, string] => typeof e[1] === 'string'),
  );
  const transport = new StdioClientTransport({
    command: server.command,
    args: server.args,
    env,
    cwd: server.cwd,
    stderr: 'pipe',
    maxBufferSize: MAX_STDIO_MESSAGE_BYTES,
  });
  const stderr = transport.stderr;
  if (stderr)
    readline
      .createInterface({ input: stderr as unknown as NodeJS.ReadableStream })
      .on('line', (line) => (opts.stderr ?? ((l) => process.stderr.write(`[${opts.name}] ${l}\n`)))(line));
  transport.onclose = () => closers.forEach((f) => f());
  await client.connect(transport);
  return { client, pid: transport.pid ?? undefined, onClose: (f) => closers.push(f), close: () => client.close() };
}
