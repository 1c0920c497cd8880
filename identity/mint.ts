// Issuing credentials: for a team's own run-starting service and approval app, and for the demo,
// which generates its own issuer key. A worker trusts the issuer by its public JWKS only.
import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, importJWK, SignJWT, type JSONWebKeySet, type JWK } from 'jose';
import { WORKFLOW_ID_CLAIM } from './credentials';
import { INPUT_BINDING_CLAIM, runInputBinding } from '../common/input-binding';

/** An issuer's signing key (a private JWK with its `kid`) and the JWKS a worker verifies with. */
export interface IssuerKey {
  issuer: string;
  privateJwk: JWK;
  jwks: JSONWebKeySet;
}

/** A fresh Ed25519 issuer key; `kid` names it in the JWKS (rotate by publishing a second key). */
export async function generateIssuerKey(issuer: string, kid = `key-${Date.now()}`): Promise<IssuerKey> {
  const { privateKey, publicKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
  const pub = { ...(await exportJWK(publicKey)), kid, alg: 'EdDSA', use: 'sig' };
  return { issuer, privateJwk: { ...(await exportJWK(privateKey)), kid, alg: 'EdDSA' }, jwks: { keys: [pub] } };
}

export interface CredentialClaims {
  /** Whom the token is for: the worker's configured audience. */
  audience: string;
  /** The principal (a run's) or the approver. */
  subject: string;
  groups?: string[];
  /** The workflow id of the run it starts: a run's credential must name it. */
  workflowId?: string;
  /**
   * The run it starts, by workflow type and input (its `credential` field is left out): the token then
   * starts only that run, so one who reads it from the start event cannot start the id with other
   * input. A worker requires it of a run's token by default (`requireInputBinding`). `input` is what
   * the workflow binds: agentRun's and toolRun's whole input; a workflow of your own, what it passes as
   * `StepCtx.open({ input })` (none: its type alone).
   */
  runInput?: { workflowType: string; input?: unknown };
  /** How long it is valid, as jose reads it (`'10m'`, `'1h'`); default 10 minutes. */
  expiresIn?: string;
  /**
   * The token's id (`jti`), by which the worker spends it: a credential starts one run or decides one
   * call. Default a fresh random UUID; give one only to name a token in your own records.
   */
  jti?: string;
}

/**
 * Signs a JWT the worker verifies: a run's credential (with its workflow id) or an approver's. Each
 * token acts once: it starts one run, or decides one waiting call; sign one per run and per decision.
 */
export async function signCredential(key: IssuerKey, claims: CredentialClaims): Promise<string> {
  const signing = await importJWK(key.privateJwk, key.privateJwk.alg ?? 'EdDSA');
  return new SignJWT({
    ...(claims.groups ? { groups: claims.groups } : {}),
    ...(claims.workflowId ? { [WORKFLOW_ID_CLAIM]: claims.workflowId } : {}),
    ...(claims.runInput
      ? { [INPUT_BINDING_CLAIM]: runInputBinding(claims.runInput.workflowType, claims.runInput.input) }
      : {}),
  })
    .setProtectedHeader({ alg: key.privateJwk.alg ?? 'EdDSA', kid: key.privateJwk.kid })
    .setIssuer(key.issuer)
    .setAudience(claims.audience)
    .setSubject(claims.subject)
    .setJti(claims.jti ?? randomUUID())
    .setIssuedAt()
    .setExpirationTime(claims.expiresIn ?? '10m')
    .sign(signing);
}
