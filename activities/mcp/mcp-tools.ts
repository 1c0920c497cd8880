// Tools served by MCP servers: declared in the manifest, checked against what the server lists
// (at worker start and on every use), called with the idempotency key in the request's `_meta`.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CatalogError, CatalogErrorCode } from '../../catalog/errors';
import { nameOf, serverOf, type Manifest, type ToolDecl } from '../../catalog/manifest';
import { declaredDefinition, definitionDigest } from '../../catalog/source-digest';
import { FailureType } from '../../catalog/failure-types';
import type { Ctx, Tool } from '../tool';
import type { Reconciliation } from '../../common/wire';
import { ToolError, ToolFailedLanded, ToolInDoubt, ToolRejected } from '../tool-errors';
import { connectMcp, type McpServerDecl } from './connection';

export interface SourceDriftProblem {
  toolId: string;
  declared: string;
  served?: string;
}

/** A server's definition of a tool differs from the one the manifest pinned. */
export class SourceDrift extends CatalogError<{ server: string; problems: SourceDriftProblem[] }> {
  constructor(server: string, problems: SourceDriftProblem[]) {
    super(
      CatalogErrorCode.DigestMismatch,
      `server "${server}" serves tools that differ from their declaration; refusing them:\n` +
        problems.map((p) => `  ${p.toolId}: declared ${p.declared}, served ${p.served ?? '(not listed)'}`).join('\n'),
      { server, problems },
    );
  }
}

export const IDEMPOTENCY_META = 'toolplane/idempotencyKey';

type Listed = Awaited<ReturnType<Client['listTools']>>['tools'];

/** Declared tools whose served definition differs (or is missing), and served tools nobody declared. */
export function compareListing(
  listed: Listed,
  decls: ToolDecl[],
): { drift: SourceDriftProblem[]; undeclared: string[] } {
  const byName = new Map(listed.map((t) => [t.name, t]));
  const drift: SourceDriftProblem[] = [];
  for (const decl of decls) {
    const declared = definitionDigest(declaredDefinition(decl));
    const served = byName.get(nameOf(decl.id));
    const servedDigest = served
      ? definitionDigest({
          name: served.name,
          description: served.description,
          inputSchema: served.inputSchema,
          annotations: served.annotations,
        })
      : undefined;
    if (servedDigest !== declared) drift.push({ toolId: decl.id, declared, served: servedDigest });
  }
  const declaredNames = new Set(decls.map((d) => nameOf(d.id)));
  return { drift, undeclared: listed.map((t) => t.name).filter((n) => !declaredNames.has(n)) };
}

/** Structured content if the server gave it; JSON text parsed; otherwise the content blocks, intact. */
export function mcpOutput(res: Record<string, unknown>): unknown {
  if (res.structuredContent !== undefined) return res.structuredContent;
  const blocks = (res.content ?? []) as { type: string; text?: string }[];
  if (blocks.length === 1 && blocks[0]!.type === 'text') {
    const text = blocks[0]!.text ?? '';
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return { content: blocks };
}

function textOf(res: Record<string, unknown>): string {
  return ((res.content ?? []) as { type: string; text?: string }[])
    .filter((b) => b.type === 'text')
    .map((b) => b.text)
    .join(' ');
}

/** Checks the listing, then calls the tool; how it failed decides whether it may have landed. */
export async function invokeMcpTool(client: Client, decl: ToolDecl, ctx: Ctx, input: unknown): Promise<unknown> {
  const { drift } = compareListing((await client.listTools()).tools, [decl]);
  if (drift.length > 0) throw new ToolError(FailureType.Unavailable, new SourceDrift(serverOf(decl.id), drift).message);
  ctx.check();
  let res: Awaited<ReturnType<Client['callTool']>>;
  try {
    res = await client.callTool(
      {
        name: nameOf(decl.id),
        arguments: input as Record<string, unknown>,
        _meta: { [IDEMPOTENCY_META]: ctx.idempotencyKey, 'toolplane/effectKey': ctx.effectKey },
      },
      undefined,
      { signal: ctx.signal, timeout: ctx.deadline ? Math.max(1, ctx.deadline - Date.now()) : undefined },
    );
  } catch (err) {
    throw new ToolInDoubt(`${decl.id}: the request was sent and no answer came: ${(err as Error).message}`);
  }
  if (res.isError) throw new ToolFailedLanded(`${decl.id}: ${textOf(res) || 'the server reported an error'}`);
  return mcpOutput(res);
}

export async function reconcileMcpTool(client: Client, reconcileTool: string, key: string): Promise<Reconciliation> {
  const res = await client.callTool({ name: reconcileTool, arguments: { idempotency_key: key } });
  if (res.isError) return { status: 'unknown', reason: textOf(res) };
  const answer = mcpOutput(res) as Reconciliation;
  return answer.status === 'landed' || answer.status === 'not_landed'
    ? answer
    : { status: 'unknown', reason: `unexpected answer ${JSON.stringify(answer)}` };
}

/** A declared MCP tool; each call connects and closes in `finally`. */
export function createMcpTool(
  decl: ToolDecl,
  server: Extract<McpServerDecl, { kind: 'mcp_stdio' | 'mcp_http' }>,
  log?: (line: string) => void,
): Tool {
  const name = serverOf(decl.id);
  const open = async () => {
    try {
      return await connectMcp(server, { name: `mcp:${name}`, stderr: log && ((l) => log(`[mcp:${name}] ${l}`)) });
    } catch (err) {
      throw new ToolRejected(`cannot reach MCP server "${name}": ${(err as Error).message}`);
    }
  };
  return {
    origin: 'extension',
    def: () => ({ id: decl.id, description: decl.description, inputSchema: decl.input_schema, safety: decl.safety }),
    async call(ctx, input) {
      const conn = await open();
      try {
        return await invokeMcpTool(conn.client, decl, ctx, input);
      } finally {
        await conn.close();
      }
    },
    ...(server.reconcile_tool
      ? {
          async reconcile(_ctx: Ctx, key: string) {
            const conn = await open();
            try {
              return await reconcileMcpTool(conn.client, server.reconcile_tool!, key);
            } finally {
              await conn.close();
            }
          },
        }
      : {}),
  };
}

function mcpServers(manifest: Manifest) {
  return Object.entries(manifest.servers).filter(
    (e): e is [string, Extract<McpServerDecl, { kind: 'mcp_stdio' | 'mcp_http' }>] =>
      e[1].kind === 'mcp_stdio' || e[1].kind === 'mcp_http',
  );
}

export function createMcpTools(manifest: Manifest, log?: (line: string) => void): Tool[] {
  const servers = new Map(mcpServers(manifest));
  return manifest.tools
    .filter((t) => servers.has(serverOf(t.id)))
    .map((t) => createMcpTool(t, servers.get(serverOf(t.id))!, log));
}

/** At worker start: every declared MCP tool must be served exactly as declared. */
export async function verifyMcpServers(manifest: Manifest, log: (line: string) => void = () => {}): Promise<void> {
  for (const [name, server] of mcpServers(manifest)) {
    const decls = manifest.tools.filter((t) => serverOf(t.id) === name);
    const conn = await connectMcp(server, { name: `mcp:${name}`, stderr: (l) => log(`[mcp:${name}] ${l}`) });
    try {
      const { drift, undeclared } = compareListing((await conn.client.listTools()).tools, decls);
      if (undeclared.length)
        log(`[mcp:${name}] serves ${undeclared.join(', ')}, which the manifest does not declare: unreachable`);
      if (drift.length) throw new SourceDrift(name, drift);
    } finally {
      await conn.close();
    }
  }
}
