// Verifies the credentials a run or an approver presents: a JWT from an issuer the worker's
// configuration trusts, for the worker's audience, unexpired, and (for a run) naming the workflow it
// starts. What it verified also names the token once (`spend`): the worker spends each credential
// exactly once (activities/identity/credential-spend.ts), so a token read from a history acts no more.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  decodeJwt,
  errors as joseErrors,
  jwtVerify,
  type JSONWebKeySet,
  type JWTPayload,
  type JWTVerifyGetKey,
} from 'jose';
import { INPUT_BINDING_CLAIM, inputBindingRefusal } from '../common/input-binding';
import { boundWorkflowId, WORKFLOW_ID_CLAIM } from './claims';
import { ToolplaneError } from '../catalog/errors';
import type { RunIdentity } from '../common/ticket';
import { ErrorCode } from '../catalog/error-codes';

export { INPUT_BINDING_CLAIM };

export { boundWorkflowId, WORKFLOW_ID_CLAIM };

/** One issuer the worker trusts: who it is, whom its tokens are for, and where its keys are. */
export interface IssuerConfig {
  /** The `iss` its tokens carry (an OIDC provider's issuer URL, or any name for your own signer). */
  issuer: string;
  /** The `aud` a token must carry to be accepted by this worker. */
  audience: string;
  /** Its public keys as a JWKS document. One of `jwks`, `jwksFile`, `jwksUrl`. */
  jwks?: JSONWebKeySet;
  /** A JWKS file, read again whenever it changes (so keys rotated at the issuer are picked up). */
  jwksFile?: string;
  /** A JWKS URL (an OIDC provider's `jwks_uri`), fetched and cached; refetched when a token names an unknown key. */
  jwksUrl?: string;
  /** The claim holding the subject's groups (default `groups`). */
  groupsClaim?: string;
  /**
   * A run's token must name its workflow id in `toolplane_workflow_id` (default true). Plain tokens of
   * an identity provider name none: set false to accept them, replayable by anyone who reads the
   * run's history until they expire.
   */
  requireWorkflowBinding?: boolean;
  /**
   * A run's token must bind the run's input in `toolplane_input` (default true; `signCredential({ runInput })`,
   * common/input-binding.ts). Without it, one who reads a run's start event can terminate-start its id with
   * the token and other input before its first task. False only for an issuer that cannot write the claim.
   */
  requireInputBinding?: boolean;
}

/**
 * Who may act through this worker: the issuers whose tokens it verifies. A worker with an identity
 * refuses a run without a valid credential, and an approval without an approver's credential.
 */
export interface IdentityConfig {
  issuers: IssuerConfig[];
  /** Clock skew accepted on `exp`/`nbf` (seconds, default 30). */
  clockToleranceSeconds?: number;
  /**
   * The longest a credential may live, in seconds (default 3600): `exp - iat`, or `exp` from now when
   * the token has no `iat`. A longer-lived token is refused (`too_long_lived`), so a leaked token and
   * its spend record stay open no longer than this, whatever its issuer chose.
   */
  maxCredentialLifetimeSeconds?: number;
}

/** The clock skew a verifier accepts when none is configured, in seconds. */
export const DEFAULT_CLOCK_TOLERANCE_SECONDS = 30;

/** The longest lifetime (`exp - iat`) a verifier accepts when none is configured, in seconds. */
export const DEFAULT_MAX_CREDENTIAL_LIFETIME_SECONDS = 3600;

export type IdentityRefusedReason =
  | 'missing'
  | 'malformed'
  | 'unknown_issuer'
  | 'bad_signature'
  | 'expired'
  | 'too_long_lived'
  | 'wrong_audience'
  | 'wrong_workflow'
  | 'wrong_input'
  | 'no_subject'
  | 'principal_mismatch'
  | 'asserted'
  | 'not_an_approver'
  | 'own_run'
  | 'not_the_principal'
  | 'replayed';

export class IdentityRefused extends ToolplaneError<
  typeof ErrorCode.IdentityRefused,
  { reason: IdentityRefusedReason }
> {
  constructor(reason: IdentityRefusedReason, message: string) {
    super(ErrorCode.IdentityRefused, message, { reason });
  }
}

/** The one use a verified credential has: what names it, and until when it could be presented. */
export interface CredentialSpend {
  /**
   * Names the token, whoever presents it: a digest of its issuer and `jti`, or, for a token without a
   * `jti`, of its issuer and its signed payload (which no one without the key can vary).
   */
  digest: string;
  /** Its `exp`, in seconds since the epoch: after it (and the clock tolerance) the token verifies no more. */
  expiresAt: number;
}

/** What a verified credential says. */
export interface VerifiedCredential extends RunIdentity {
  issuer: string;
  /** The workflow id the token is bound to, when it names one. */
  workflowId?: string;
  spend: CredentialSpend;
}

function spendOf(token: string, payload: JWTPayload, issuer: string): CredentialSpend {
  const named =
    typeof payload.jti === 'string' && payload.jti.length > 0
      ? `jti\n${payload.jti}`
      : `payload\n${token.split('.')[1]}`;
  return {
    digest: createHash('sha256').update(`${issuer}\n${named}`).digest('hex'),
    expiresAt: payload.exp!,
  };
}

interface Issuer {
  config: IssuerConfig;
  keys: JWTVerifyGetKey;
}

/** A JWKS file's key set, read again when the file changes. */
function fileKeySet(file: string): JWTVerifyGetKey {
  let seen: { mtimeMs: number; size: number; keys: JWTVerifyGetKey } | undefined;
  const current = (): JWTVerifyGetKey => {
    const stat = fs.statSync(file);
    if (!seen || seen.mtimeMs !== stat.mtimeMs || seen.size !== stat.size) {
      const doc = JSON.parse(fs.readFileSync(file, 'utf8')) as JSONWebKeySet;
      seen = { mtimeMs: stat.mtimeMs, size: stat.size, keys: createLocalJWKSet(doc) };
    }
    return seen.keys;
  };
  current(); // an unreadable file refuses the worker at start, not the first run
  return (header, token) => current()(header, token);
}

function keySetOf(c: IssuerConfig): JWTVerifyGetKey {
  const given = [c.jwks, c.jwksFile, c.jwksUrl].filter((k) => k !== undefined).length;
  if (given !== 1)
    throw new ToolplaneError(
      ErrorCode.IdentityConfigInvalid,
      `issuer ${c.issuer}: give exactly one of jwks, jwksFile, jwksUrl (${given} given)`,
    );
  try {
    if (c.jwks) return createLocalJWKSet(c.jwks);
    if (c.jwksFile) return fileKeySet(c.jwksFile);
    return createRemoteJWKSet(new URL(c.jwksUrl!));
  } catch (err) {
    throw new ToolplaneError(
      ErrorCode.IdentityConfigInvalid,
      `issuer ${c.issuer}: its keys cannot be read (${(err as Error).message})`,
    );
  }
}

function refusalOf(err: unknown, issuer: string): IdentityRefused {
  if (err instanceof joseErrors.JWTExpired) return new IdentityRefused('expired', `the credential expired (${issuer})`);
  if (err instanceof joseErrors.JWTClaimValidationFailed && err.claim === 'aud')
    return new IdentityRefused('wrong_audience', `the credential is not for this worker's audience (${issuer})`);
  if (err instanceof joseErrors.JOSEError)
    return new IdentityRefused('bad_signature', `the credential does not verify against ${issuer}: ${err.message}`);
  return new IdentityRefused('malformed', `the credential cannot be read: ${(err as Error).message}`);
}

/** Verifies credentials against the issuers a worker trusts. */
export class CredentialVerifier {
  private readonly issuers: Issuer[];
  /** Clock skew accepted on `exp`/`nbf`, in seconds: a spent credential's record outlives its `exp` by this much. */
  readonly tolerance: number;
  /** The longest lifetime (`exp - iat`, or `exp` from now without `iat`) a credential may have, in seconds. */
  readonly maxLifetime: number;

  constructor(config: IdentityConfig) {
    if (!Array.isArray(config.issuers) || config.issuers.length === 0)
      throw new ToolplaneError(ErrorCode.IdentityConfigInvalid, 'an identity needs at least one issuer');
    for (const c of config.issuers)
      if (!c.issuer || !c.audience)
        throw new ToolplaneError(ErrorCode.IdentityConfigInvalid, 'every issuer needs an issuer name and an audience');
    this.issuers = config.issuers.map((c) => ({ config: c, keys: keySetOf(c) }));
    this.tolerance = config.clockToleranceSeconds ?? DEFAULT_CLOCK_TOLERANCE_SECONDS;
    this.maxLifetime = config.maxCredentialLifetimeSeconds ?? DEFAULT_MAX_CREDENTIAL_LIFETIME_SECONDS;
    if (!Number.isFinite(this.maxLifetime) || this.maxLifetime <= 0)
      throw new ToolplaneError(
        ErrorCode.IdentityConfigInvalid,
        `maxCredentialLifetimeSeconds must be a positive number of seconds (${String(this.maxLifetime)} given)`,
      );
  }

  /** Refuses a token living longer than the bound: `exp - iat`, or `exp` from now without `iat`. */
  private checkLifetime(payload: JWTPayload, what: string): void {
    const from = typeof payload.iat === 'number' ? payload.iat : Math.floor(Date.now() / 1000);
    const lifetime = payload.exp! - from;
    if (lifetime > this.maxLifetime + this.tolerance)
      throw new IdentityRefused(
        'too_long_lived',
        `${what}'s credential lives ${lifetime}s (exp - ${typeof payload.iat === 'number' ? 'iat' : 'now'}), ` +
          `longer than this worker's maximum credential lifetime of ${this.maxLifetime}s (maxCredentialLifetimeSeconds)`,
      );
  }

  /** The workflow id a run's token is bound to (checked against this run's), and its input binding. */
  private checkBindings(
    payload: JWTPayload,
    c: IssuerConfig,
    opts: { workflowId: string; requireBinding: boolean; what: string; inputBinding?: string },
  ): unknown {
    const bound = payload[WORKFLOW_ID_CLAIM];
    if (bound !== undefined && bound !== opts.workflowId)
      throw new IdentityRefused(
        'wrong_workflow',
        `${opts.what}'s credential is bound to workflow ${JSON.stringify(bound)}, not ${opts.workflowId}`,
      );
    if (bound === undefined && opts.requireBinding && c.requireWorkflowBinding !== false)
      throw new IdentityRefused(
        'wrong_workflow',
        `${opts.what}'s credential names no workflow (${WORKFLOW_ID_CLAIM}); this worker accepts only tokens bound to the run they start`,
      );
    const inputRefusal =
      opts.inputBinding === undefined
        ? undefined
        : inputBindingRefusal(payload[INPUT_BINDING_CLAIM], opts.inputBinding, {
            required: opts.requireBinding && c.requireWorkflowBinding !== false && c.requireInputBinding !== false,
            what: opts.what,
          });
    if (inputRefusal) throw new IdentityRefused('wrong_input', inputRefusal);
    return bound;
  }

  /**
   * The identity a token vouches for. A binding the token carries must name `workflowId`;
   * `requireBinding` (a run's credential) refuses a token without one, unless its issuer allows it.
   */
  async verify(
    token: unknown,
    opts: {
      workflowId: string;
      requireBinding: boolean;
      what: string;
      /** A run's: the binding of its workflow type and input (common/input-binding.ts) its token must name. */
      inputBinding?: string;
    },
  ): Promise<VerifiedCredential> {
    if (typeof token !== 'string' || token.length === 0)
      throw new IdentityRefused('missing', `${opts.what} carries no credential; this worker verifies who acts`);
    let claimed: JWTPayload;
    try {
      claimed = decodeJwt(token);
    } catch (err) {
      throw new IdentityRefused('malformed', `${opts.what}'s credential is not a JWT: ${(err as Error).message}`);
    }
    const issuer = this.issuers.find((i) => i.config.issuer === claimed.iss);
    if (!issuer)
      throw new IdentityRefused(
        'unknown_issuer',
        `${opts.what}'s credential is issued by ${JSON.stringify(claimed.iss ?? null)}, which this worker does not trust`,
      );
    const c = issuer.config;
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, issuer.keys, {
        issuer: c.issuer,
        audience: c.audience,
        clockTolerance: this.tolerance,
        requiredClaims: ['exp'],
      }));
    } catch (err) {
      throw refusalOf(err, c.issuer);
    }
    this.checkLifetime(payload, opts.what);
    if (typeof payload.sub !== 'string' || payload.sub.length === 0)
      throw new IdentityRefused('no_subject', `${opts.what}'s credential names no subject (sub)`);
    const bound = this.checkBindings(payload, c, opts);
    const rawGroups = payload[c.groupsClaim ?? 'groups'];
    const groups = Array.isArray(rawGroups) ? rawGroups.filter((g): g is string => typeof g === 'string') : [];
    return {
      principal: payload.sub,
      groups: [...new Set(groups)].sort(),
      issuer: c.issuer,
      ...(typeof bound === 'string' ? { workflowId: bound } : {}),
      spend: spendOf(token, payload, c.issuer),
    };
  }
}
