// The gateway's DNS-rebinding guard, as the Streamable HTTP transport asks: a request whose `Host` is not
// one of the gateway's own names is refused, and so is a browser request whose `Origin` is not allowed.
// A client that sends no Origin (every non-browser MCP client) is not affected by the Origin check.
import type { IncomingMessage } from 'node:http';
import type { HttpRefusal } from './bearer';

/** Which `Host` and `Origin` values the gateway answers. */
export interface OriginPolicy {
  /** Lower-case `host[:port]` values; `*` admits any. */
  hosts: ReadonlySet<string>;
  /** Lower-case origins (`scheme://host[:port]`); `*` admits any. */
  origins: ReadonlySet<string>;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

function bracketed(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

/**
 * The policy of a gateway listening on `host:port` with resource URI `resource`: by default its own
 * names (the listen address, `localhost` and `127.0.0.1` when that is a loopback address, and the
 * resource's host) as hosts, and the `http://` origins of those names.
 */
export function originPolicy(o: {
  host: string;
  port: number;
  resource: string;
  allowedHosts?: readonly string[];
  allowedOrigins?: readonly string[];
}): OriginPolicy {
  const names = new Set<string>([`${bracketed(o.host)}:${o.port}`]);
  if (LOOPBACK.has(o.host)) for (const n of ['127.0.0.1', 'localhost', '[::1]']) names.add(`${n}:${o.port}`);
  const resource = new URL(o.resource);
  names.add(resource.host);
  const hosts = o.allowedHosts ?? [...names];
  const origins = o.allowedOrigins ?? [...[...names].map((n) => `http://${n}`), resource.origin];
  return {
    hosts: new Set(hosts.map((h) => h.toLowerCase())),
    origins: new Set(origins.map((x) => x.replace(/\/+$/, '').toLowerCase())),
  };
}

function forbidden(message: string): HttpRefusal {
  return { status: 403, headers: {}, body: { jsonrpc: '2.0', id: null, error: { code: -32600, message } } };
}

/** Why the request's Host or Origin is refused, or undefined when both are allowed (or no Origin is sent). */
export function refusedOrigin(policy: OriginPolicy, req: IncomingMessage): HttpRefusal | undefined {
  const host = (req.headers.host ?? '').toLowerCase();
  if (!policy.hosts.has('*') && !policy.hosts.has(host))
    return forbidden(
      `Forbidden: Host ${JSON.stringify(host)} is not one of this gateway's names; ` +
        "add it to the gateway's allowedHosts option (--allowed-host) if the gateway is reached by that name",
    );
  const origin = req.headers.origin;
  if (origin === undefined) return undefined;
  const o = origin.replace(/\/+$/, '').toLowerCase();
  if (policy.origins.has('*') || policy.origins.has(o)) return undefined;
  return forbidden(
    `Forbidden: Origin ${origin} is not allowed; add it to the gateway's allowedOrigins option ` +
      '(--allowed-origin) to let pages from that origin call the gateway',
  );
}
