// A dormant, manifest-declared extension tool: registered like any live tool (identity, schema,
// digest equal by construction to its catalogue record), but its extension process starts only
// when an authorised call carries the run's extension-runtime lease.
import { ApplicationFailure } from '@temporalio/activity';
import { EXTENSION_RUNTIME } from '../../catalog/capabilities';
import { FailureType, RunFailureType } from '../../catalog/failure-types';
import { serverOf, type Manifest, type ToolDecl } from '../../catalog/manifest';
import { reconcileMcpTool, invokeMcpTool, SourceDrift } from '../mcp/mcp-tools';
import type { Tool } from '../tool';
import { ToolError } from '../tool-errors';
import type { ExtensionManager } from './extension-manager';

export const LEASE_CAPABILITY = EXTENSION_RUNTIME;

export class LeaseMissing extends ToolError {
  constructor(toolId: string) {
    super(FailureType.Unavailable, `${toolId} needs the run's ${LEASE_CAPABILITY} lease; nothing was started`);
    this.name = RunFailureType.LeaseMissing;
  }
}

/**
 * Starts the extension if needed. Nothing was sent when this fails: a changed definition is a
 * refusal, a process that cannot start is unavailable; neither is retried (each try would spawn it again).
 */
async function acquire(manager: ExtensionManager, plugin: string): ReturnType<ExtensionManager['acquire']> {
  try {
    return await manager.acquire(plugin);
  } catch (err) {
    if (err instanceof SourceDrift) throw ApplicationFailure.nonRetryable(err.message, FailureType.DefinitionChanged);
    throw new ToolError(
      FailureType.Unavailable,
      `extension "${plugin}" could not start, so nothing was sent: ${(err as Error)?.message ?? String(err)}`,
    );
  }
}

export function createDeferredExtensionTool(decl: ToolDecl, manager: ExtensionManager, reconcileTool?: string): Tool {
  const plugin = serverOf(decl.id);
  return {
    origin: 'extension',
    def: () => ({ id: decl.id, description: decl.description, inputSchema: decl.input_schema, safety: decl.safety }),
    async call(ctx, input) {
      if (!ctx.lease) throw new LeaseMissing(decl.id);
      const { conn, started } = await acquire(manager, plugin);
      if (started) ctx.emit({ kind: 'extension.started', detail: { plugin, lease: ctx.lease, ms: started.ms } });
      return invokeMcpTool(conn.client, decl, ctx, input);
    },
    ...(reconcileTool
      ? {
          async reconcile(ctx: Parameters<NonNullable<Tool['reconcile']>>[0], key: string) {
            if (!ctx.lease) throw new LeaseMissing(decl.id);
            const { conn } = await acquire(manager, plugin);
            return reconcileMcpTool(conn.client, reconcileTool, key);
          },
        }
      : {}),
  };
}

export function createExtensionTools(manifest: Manifest, manager: ExtensionManager): Tool[] {
  return manifest.tools.flatMap((t) => {
    const server = manifest.servers[serverOf(t.id)];
    return server?.kind === 'extension' ? [createDeferredExtensionTool(t, manager, server.reconcile_tool)] : [];
  });
}
