// createGateway: toolplane as an MCP server beside a worker. Serves the tools a manifest declares over
// MCP Streamable HTTP (revisions 2026-07-28 and, through @modelcontextprotocol/sdk, 2025-11-25); every
// `tools/call` is a governed call in the session's `mcpSession` run, which a worker with ToolplanePlugin serves.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@temporalio/client';
import type { Manifest } from '../catalog/manifest';
import { manifestDigest } from '../catalog/digest';
import { ToolplaneError } from '../catalog/errors';
import { ErrorCode } from '../catalog/error-codes';
import type { IdentityConfig } from '../identity/credentials';
import type { RunIdentity } from '../common/ticket';
import { BearerVerifier, protectedResourceMetadata } from './bearer';
import { gatewayListener } from './http';
import { offeredTo, toolsByName, type OfferedTool } from './offer';
import { originPolicy } from './origin';
import { SessionClient } from './session-client';

/** The largest arguments a call may carry by default: 256 KiB. */
export const DEFAULT_MAX_ARGUMENT_BYTES = 256 * 1024;
/** How long a call that asked for progress is held open waiting for a person, by default: 10 minutes. */
export const DEFAULT_PROGRESS_WAIT_MS = 10 * 60_000;

/** What `createGateway` needs: the worker's authority (manifest, identity, ticket key) and where its runs are. */
export interface GatewayOptions {
  /** A Temporal client on the namespace the worker serves. */
  client: Client;
  /** The task queue of the worker that runs the sessions (ToolplanePlugin registers `mcpSession`). */
  taskQueue: string;
  /** The worker's manifest: what is offered, to whom, with which schemas. */
  manifest: Manifest;
  /** The worker's identity config: the issuers whose bearer tokens the gateway accepts. */
  identity: IdentityConfig;
  /** The worker's ticket key (as ToolplanePlugin's `ticketKey`); default TOOLPLANE_TICKET_KEY or the data dir's key. */
  ticketKey?: string | Buffer;
  /**
   * The gateway's resource URI: the audience its tokens must name and what its Protected Resource
   * Metadata says. Default: the MCP endpoint's URL (`http://<host>:<port>/mcp`).
   */
  resource?: string;
  /** Default 0: a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** End a session's run after this long without a call (default 30 minutes). */
  idleTimeoutMs?: number;
  /**
   * The most MCP sessions one principal may hold open (default 20; each holds a run and its pass's spend
   * record): a new one beyond it is refused with JSON-RPC error -32003 (`SessionLimit`).
   */
  maxOpenSessionsPerPrincipal?: number;
  /** Refuse a call whose arguments exceed this many bytes as JSON (default 256 KiB). */
  maxArgumentBytes?: number;
  /** How long a call sent with a progressToken is held open waiting for a person (default 10 minutes). */
  progressWaitMs?: number;
  /** How often a held call asks its run again (default 1 s). */
  progressPollMs?: number;
  /**
   * Browser origins allowed to call the gateway (`scheme://host[:port]`; `*` allows any). A request with
   * another `Origin` is refused 403; a request without one (a non-browser client) is not affected.
   * Default: the gateway's own origins (its listen address, `localhost` names, the resource's origin).
   */
  allowedOrigins?: string[];
  /**
   * `Host` header values the gateway answers (`host[:port]`; `*` allows any), against DNS rebinding.
   * Default: the listen address with its port, `localhost`/`127.0.0.1`/`[::1]` with it on a loopback
   * address, and the resource URI's host. Give it when the gateway is reached through another name.
   */
  allowedHosts?: string[];
}

/** A running gateway. */
export interface Gateway {
  /** The MCP endpoint's URL. */
  url: string;
  /** The resource URI tokens must name as audience. */
  resource: string;
  /** Stops serving and closes every connection; the sessions' runs go on and a new gateway serves them. */
  close(): Promise<void>;
}

const MCP_PATH = '/mcp';

function listen(server: http.Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

/**
 * Starts the gateway; it serves until `close()`. Each `tools/call` becomes a governed call in the
 * session's `mcpSession` run, which a worker with ToolplanePlugin on `taskQueue` serves.
 *
 * @example
 * ```ts
 * const gateway = await createGateway({ client, taskQueue: 'toolplane', manifest, identity, port: 8788 });
 * // an MCP client: POST gateway.url with `Authorization: Bearer <token for gateway.resource>`
 * await gateway.close();
 * ```
 * @throws UsageError (a ToolplaneError) when two declared tools would share an MCP name.
 */
export async function createGateway(opts: GatewayOptions): Promise<Gateway> {
  const byName = toolsByName(opts.manifest); // refuses two tools that share an MCP name, before listening
  const maxArgumentBytes = opts.maxArgumentBytes ?? DEFAULT_MAX_ARGUMENT_BYTES;
  if (!Number.isInteger(maxArgumentBytes) || maxArgumentBytes < 1)
    throw new ToolplaneError(
      ErrorCode.UsageError,
      `maxArgumentBytes must be a positive integer (${maxArgumentBytes} given)`,
    );
  const server = http.createServer();
  const host = opts.host ?? '127.0.0.1';
  const address = await listen(server, opts.port ?? 0, host);
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${address.port}${MCP_PATH}`;
  const resource = opts.resource ?? url;
  const sessions = new SessionClient({
    client: opts.client,
    taskQueue: opts.taskQueue,
    ticketKey: opts.ticketKey,
    idleTimeoutMs: opts.idleTimeoutMs,
    manifestDigest: manifestDigest(opts.manifest),
    ...(opts.maxOpenSessionsPerPrincipal !== undefined
      ? { maxOpenSessionsPerPrincipal: opts.maxOpenSessionsPerPrincipal }
      : {}),
  });
  const offered = (who: RunIdentity): Map<string, OfferedTool> =>
    new Map(offeredTo(opts.manifest, byName, who).map((t) => [t.name, t]));
  server.on(
    'request',
    gatewayListener({
      sessions,
      offered,
      limits: {
        maxArgumentBytes,
        progressWaitMs: opts.progressWaitMs ?? DEFAULT_PROGRESS_WAIT_MS,
        progressPollMs: opts.progressPollMs ?? 1000,
      },
      version: '0.1.0',
      verifier: new BearerVerifier(opts.identity, resource),
      metadata: protectedResourceMetadata(resource, opts.identity),
      mcpPath: MCP_PATH,
      origins: originPolicy({
        host,
        port: address.port,
        resource,
        ...(opts.allowedHosts ? { allowedHosts: opts.allowedHosts } : {}),
        ...(opts.allowedOrigins ? { allowedOrigins: opts.allowedOrigins } : {}),
      }),
      // The arguments, and room for the JSON-RPC envelope around them.
      maxBodyBytes: maxArgumentBytes + 64 * 1024,
    }),
  );
  return {
    url,
    resource,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}
