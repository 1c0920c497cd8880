// The gateway as an OAuth 2.1 resource server (MCP authorization, revision 2025-11-25): it verifies
// each request's bearer token against the issuers the worker trusts, for the gateway's own resource
// URI as audience, and describes itself with Protected Resource Metadata (RFC 9728). The token is
// read here and nowhere else: it is never logged, stored, or written to a history.
import { createHash } from 'node:crypto';
import { CredentialVerifier, IdentityRefused, type IdentityConfig } from '../identity/credentials';
import type { RunIdentity } from '../common/ticket';

/** The path of the Protected Resource Metadata document (RFC 9728 §3). */
export const PRM_PATH = '/.well-known/oauth-protected-resource';

/** RFC 9728's document: who the resource is, which authorization servers issue its tokens. */
export interface ProtectedResourceMetadata {
  resource: string;
  authorization_servers: string[];
  bearer_methods_supported: string[];
  resource_name: string;
}

/** Where a client reads the metadata of `resource`: the well-known path, with the resource's path appended. */
export function metadataUrl(resource: string): string {
  const url = new URL(resource);
  const tail = url.pathname === '/' ? '' : url.pathname.replace(/\/$/, '');
  return `${url.origin}${PRM_PATH}${tail}`;
}

export function protectedResourceMetadata(resource: string, identity: IdentityConfig): ProtectedResourceMetadata {
  return {
    resource,
    authorization_servers: [...new Set(identity.issuers.map((i) => i.issuer))],
    bearer_methods_supported: ['header'],
    resource_name: 'toolplane MCP gateway',
  };
}

/** A request the gateway refuses before MCP sees it: the HTTP status, its headers and a JSON-RPC error body. */
export interface HttpRefusal {
  status: number;
  headers: Record<string, string>;
  body: { jsonrpc: '2.0'; id: string | number | null; error: { code: number; message: string; data?: unknown } };
}

/** The JSON-RPC code the gateway answers an unauthenticated request with (the SDK's server-error range). */
export const UNAUTHORIZED_RPC_CODE = -32001;

/** The verified bearer's identity, or the 401 the MCP authorization spec asks for. */
export type BearerResult = { ok: true; identity: RunIdentity } | { ok: false; refusal: HttpRefusal };

/** RFC 6750 §3 quoted-string: no quote or backslash survives unescaped. */
const quoted = (s: string) => `"${s.replace(/["\\]/g, '\\$&')}"`;

/** How many verified tokens the gateway remembers (a client sends the same token with every request). */
const REMEMBERED_TOKENS = 1_000;

export class BearerVerifier {
  private readonly verifier: CredentialVerifier;
  private readonly resourceMetadata: string;
  /**
   * Tokens verified before, by their SHA-256, until their `exp`: a signature check per request costs
   * a third of a millisecond, and a verified JWT stays valid until it expires (nothing revokes it sooner).
   */
  private readonly verified = new Map<string, { identity: RunIdentity; expiresAt: number }>();

  constructor(identity: IdentityConfig, resource: string) {
    // The gateway is its own audience: a token for the worker (or any other resource) is not for it.
    // MCP access tokens name no workflow: the session pass, not the token, binds a run.
    this.verifier = new CredentialVerifier({
      ...identity,
      issuers: identity.issuers.map((i) => ({ ...i, audience: resource, requireWorkflowBinding: false })),
    });
    this.resourceMetadata = metadataUrl(resource);
  }

  private refuse(message: string, invalid: boolean): HttpRefusal {
    const params = [`resource_metadata=${quoted(this.resourceMetadata)}`];
    if (invalid) params.unshift('error="invalid_token"', `error_description=${quoted(message)}`);
    return {
      status: 401,
      headers: { 'WWW-Authenticate': `Bearer ${params.join(', ')}` },
      body: { jsonrpc: '2.0', id: null, error: { code: UNAUTHORIZED_RPC_CODE, message } },
    };
  }

  /** Verifies an `Authorization` header's bearer token; the token never leaves this method. */
  async verify(authorization: string | undefined): Promise<BearerResult> {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
    if (!match)
      return {
        ok: false,
        refusal: this.refuse(
          authorization
            ? 'the Authorization header is not a bearer token'
            : 'this MCP server needs a bearer token (see the resource metadata)',
          authorization !== undefined,
        ),
      };
    const digest = createHash('sha256').update(match[1]!).digest('base64url');
    const known = this.verified.get(digest);
    if (known && Date.now() < known.expiresAt * 1000) return { ok: true, identity: known.identity };
    this.verified.delete(digest);
    try {
      const v = await this.verifier.verify(match[1], {
        workflowId: '',
        requireBinding: false,
        what: 'the MCP request',
      });
      const identity = { principal: v.principal, groups: v.groups, issuer: v.issuer };
      if (this.verified.size >= REMEMBERED_TOKENS) this.verified.delete(this.verified.keys().next().value!);
      this.verified.set(digest, { identity, expiresAt: v.spend.expiresAt });
      return { ok: true, identity };
    } catch (err) {
      if (err instanceof IdentityRefused)
        return { ok: false, refusal: this.refuse(`${err.data?.reason ?? 'refused'}: ${err.message}`, true) };
      throw err;
    }
  }
}
