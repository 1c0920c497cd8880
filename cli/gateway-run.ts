/**
 * `toolplane gateway …`: a toolplane worker and the MCP gateway in one process. The worker serves the
 * sessions' runs (`mcpSession`) and their tools; the gateway serves MCP over Streamable HTTP, verifying
 * each bearer token against the issuers of `--identity` with `--resource` as audience.
 *
 *   toolplane gateway --manifest examples/support-desk/manifest.yaml --tools examples/support-desk/tools \
 *     --identity identity.json --port 8788
 *
 * Without a configured Temporal server (`--address`, `--profile`, TEMPORAL_ADDRESS, TEMPORAL_PROFILE) a
 * source checkout starts the embedded dev server, as `npm start` does; an installed package connects to
 * 127.0.0.1:7233 (`temporal server start-dev`).
 */
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { loadManifest } from '../runtime/manifest-file';
import { ToolplaneError } from '../catalog/errors';
import { ErrorCode } from '../catalog/error-codes';
import { loadIdentityFile } from '../activities/identity/identity-file';
import { connectionSettings, connectOptions, type ConnectionSettings } from '../inspect/connection';
import { createGateway, type Gateway } from '../gateway/gateway';
import { loadToolModules } from './tool-modules';
import {
  connectWithRetry,
  deploymentOf,
  shutdownOnSignals,
  workerFromOptions,
  workerProgram,
  type WorkerCliOptions,
} from './worker-run';

interface GatewayCliOptions extends WorkerCliOptions {
  port: string;
  host: string;
  resource?: string;
  idleTimeout?: string;
  allowedOrigin?: string[];
  allowedHost?: string[];
}

/** The Temporal server the gateway's worker and sessions use, and how to let go of it. */
interface TemporalTarget {
  settings: ConnectionSettings;
  stop(): Promise<void>;
}

/** What a source checkout's scripts/dev-server.ts offers (absent from an installed package). */
interface DevServerModule {
  connectOrStart(opts: { dynamicConfig?: Record<string, unknown> }): Promise<{
    address: string;
    namespace: string;
    connection?: ConnectionSettings;
    uiUrl?: string;
    stop(): Promise<void>;
  }>;
  EAGER_ACTIVITIES: Record<string, unknown>;
}

function devServerModule(): DevServerModule | undefined {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require(path.join(__dirname, '..', 'scripts', 'dev-server')) as DevServerModule;
  } catch {
    return undefined;
  }
}

async function temporalTarget(o: GatewayCliOptions): Promise<TemporalTarget> {
  const configured = o.address ?? o.profile ?? process.env.TEMPORAL_ADDRESS ?? process.env.TEMPORAL_PROFILE;
  const dev = configured ? undefined : devServerModule();
  if (!dev) return { settings: connectionSettings(o), stop: async () => {} };
  const server = await dev.connectOrStart({ dynamicConfig: dev.EAGER_ACTIVITIES });
  return {
    settings: server.connection ?? {
      address: server.address,
      namespace: server.namespace,
      ...(server.uiUrl ? { uiUrl: server.uiUrl } : {}),
    },
    stop: () => server.stop(),
  };
}

function gatewayProgram() {
  return workerProgram()
    .name('toolplane gateway')
    .option('--port <n>', 'the MCP endpoint port', process.env.TOOLPLANE_GATEWAY_PORT ?? '8788')
    .option('--host <host>', 'the interface to listen on', process.env.TOOLPLANE_GATEWAY_HOST ?? '127.0.0.1')
    .option(
      '--resource <uri>',
      "the gateway's resource URI: the audience its bearer tokens must name (default: the MCP endpoint's URL)",
      process.env.TOOLPLANE_GATEWAY_RESOURCE,
    )
    .option('--idle-timeout <ms>', "end a session's run after this long without a call (default 30 minutes)")
    .option(
      '--allowed-origin <origin...>',
      "a browser Origin allowed to call the gateway (default: the gateway's own origins; * allows any)",
    )
    .option(
      '--allowed-host <host...>',
      "a Host header the gateway answers (default: its listen address, localhost names and the resource's host)",
    );
}

function numberOption(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0)
    throw new ToolplaneError(ErrorCode.UsageError, `${flag} takes a whole number (${JSON.stringify(value)} given)`);
  return n;
}

/** What a user pastes into an MCP client's configuration. */
function clientConfig(gateway: Gateway): string {
  return JSON.stringify(
    {
      mcpServers: { toolplane: { url: gateway.url, headers: { Authorization: 'Bearer <a token for this resource>' } } },
    },
    null,
    2,
  );
}

export async function runGatewayCli(argv: string[]): Promise<void> {
  const o = gatewayProgram().parse(argv).opts<GatewayCliOptions>();
  if (!o.identity)
    throw new ToolplaneError(
      ErrorCode.UsageError,
      'the gateway verifies bearer tokens: give --identity <file> (or TOOLPLANE_IDENTITY) naming the issuers it trusts',
    );
  const identity = loadIdentityFile(o.identity);
  const port = numberOption(o.port, '--port');
  const idleTimeoutMs = numberOption(o.idleTimeout, '--idle-timeout');
  const deployment = deploymentOf(o);
  const { manifest } = loadManifest(o.manifest);
  const tools = await loadToolModules(o.tools);
  const target = await temporalTarget(o);
  const { settings } = target;
  const native = await connectWithRetry(connectOptions(settings), settings.address);
  if (!native) return target.stop();
  const connection = await Connection.connect(connectOptions(settings));
  const client = new Client({ connection, namespace: settings.namespace });
  const worker = await workerFromOptions(o, native, settings.namespace, { manifest, tools, deployment });
  const gateway = await createGateway({
    client,
    taskQueue: o.taskQueue,
    manifest,
    identity,
    ...(o.resource ? { resource: o.resource } : {}),
    ...(port !== undefined ? { port } : {}),
    host: o.host,
    ...(idleTimeoutMs !== undefined ? { idleTimeoutMs } : {}),
    ...(o.allowedOrigin ? { allowedOrigins: o.allowedOrigin } : {}),
    ...(o.allowedHost ? { allowedHosts: o.allowedHost } : {}),
  });
  shutdownOnSignals(worker);
  console.error(
    `[gateway] MCP endpoint ${gateway.url} (resource ${gateway.resource}); worker pid ${process.pid} polling ` +
      `${o.taskQueue} on ${settings.address} with ${tools.length} tools\n[gateway] an MCP client's configuration:\n${clientConfig(gateway)}`,
  );
  try {
    await worker.run();
  } finally {
    await gateway.close();
    await connection.close();
    await native.close();
    await target.stop();
  }
}
