/**
 * The secured cluster's credentials, written into one folder (by default `<data dir>/credentials`,
 * never committed): a CA and the certificates it signs (openssl), a JWT signing key and the JWKS the
 * server verifies tokens with (node:crypto), a token per role, and a second CA with a client
 * certificate the cluster must refuse. Certificates and keys are made once and reused; tokens are
 * minted again at every start.
 *
 *   ca.pem                     the cluster CA; clients trust the frontend with it (TEMPORAL_TLS_CA)
 *   server.pem / server.key    Temporal's own processes: the frontend's and the internode listeners,
 *                              internode clients, and Temporal's worker service (common name
 *                              `temporal-system`, which TOOLPLANE_CERT_ROLES makes a cluster admin)
 *   ui.pem / ui.key            the Web UI (`temporal-ui`: reads only)
 *   client.pem / client.key    toolplane's parties (`toolplane-client`): transport only, no role
 *   wrong-ca.pem, wrong-client.pem / .key   a CA the cluster does not trust, for tests
 *   jwks.json                  the public key tokens are verified with
 *   jwt-signing.key            the issuer's private key (mode 0600)
 *   <role>.jwt, <role>.env     a token per role, and the variables that connect with it
 *   temporal.toml              the same as envconfig profiles (TEMPORAL_CONFIG_FILE, --profile <role>)
 */
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ClusterFailed } from './errors';

/** The parties of a secured cluster, and the permissions (`<namespace>:<role>`) their tokens carry. */
export const ROLES = {
  /** May start, signal, update and query runs and read their results; never poll a task queue. */
  starter: (ns: string) => [`${ns}:write`],
  /** May also list, describe, cancel, terminate and reset runs, and manage the namespace; never poll. */
  operator: (ns: string) => [`${ns}:admin`],
  /**
   * toolplane's worker: polls and answers task queues, and starts, signals and updates runs; `read` lets
   * its health check (`toolplane list`) see runs, which its polls show it anyway.
   */
  worker: (ns: string) => [`${ns}:worker`, `${ns}:read`],
  /** The whole cluster: the set-up (namespace, search attributes). Not for a toolplane party. */
  admin: () => ['temporal-system:admin'],
} as const;
export type Role = keyof typeof ROLES;

/** Certificate common names the server gives a role to when the caller carries no token. */
export const CERT_ROLES = 'temporal-system=temporal-system:admin,temporal-ui=temporal-system:read';

/** The names on the server certificate: this machine, and docker-compose.yml's service names. */
export const SERVER_NAMES = ['localhost', 'temporal-frontend', 'temporal-cluster'];
/** The name internode and worker-service clients check the server certificate against. */
export const INTERNODE_SERVER_NAME = 'temporal-cluster';

export const TOKEN_ISSUER = 'toolplane-cluster';
const TOKEN_LIFETIME_S = 7 * 24 * 3600;

export interface TlsFiles {
  ca: string;
  cert: string;
  key: string;
}

export interface ClusterCredentials {
  dir: string;
  ca: string;
  jwks: string;
  server: TlsFiles;
  ui: TlsFiles;
  client: TlsFiles;
  /** A client certificate of a CA the cluster does not trust. */
  wrongCa: TlsFiles;
  tokens: Record<Role, string>;
  signingKey: string;
}

type Log = (line: string) => void;

function openssl(args: string[], cwd: string): void {
  const r = spawnSync('openssl', args, { cwd, encoding: 'utf8' });
  if (r.error)
    throw new ClusterFailed('credentials', `openssl is needed to make the cluster's certificates: ${r.error.message}`);
  if (r.status !== 0) throw new ClusterFailed('credentials', `openssl ${args.join(' ')} failed: ${r.stderr.trim()}`);
}

/** `openssl req`'s arguments for a fresh P-256 key in `<name>.key` (unencrypted) and the subject `CN=<cn>`. */
const newKey = (name: string, cn: string): string[] => [
  '-newkey',
  'ec',
  '-pkeyopt',
  'ec_paramgen_curve:prime256v1',
  '-nodes',
  '-keyout',
  `${name}.key`,
  '-subj',
  `/CN=${cn}`,
];

function makeCa(dir: string, name: string, cn: string): void {
  openssl(
    [
      'req',
      '-x509',
      ...newKey(name, cn),
      '-out',
      `${name}.pem`,
      '-days',
      '3650',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ],
    dir,
  );
}

function makeLeaf(
  dir: string,
  ca: string,
  name: string,
  cn: string,
  opts: { server?: boolean; names?: string[] } = {},
): void {
  openssl(['req', ...newKey(name, cn), '-out', `${name}.csr`], dir);
  const ext = [
    'basicConstraints=critical,CA:FALSE',
    'keyUsage=critical,digitalSignature,keyEncipherment',
    `extendedKeyUsage=${opts.server ? 'serverAuth,clientAuth' : 'clientAuth'}`,
    ...(opts.names ? [`subjectAltName=${[...opts.names.map((n) => `DNS:${n}`), 'IP:127.0.0.1'].join(',')}`] : []),
  ];
  fs.writeFileSync(path.join(dir, `${name}.ext`), `${ext.join('\n')}\n`);
  openssl(
    [
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      `${ca}.pem`,
      '-CAkey',
      `${ca}.key`,
      '-set_serial',
      `0x${crypto.randomBytes(12).toString('hex')}`,
      '-days',
      '825',
      '-extfile',
      `${name}.ext`,
      '-out',
      `${name}.pem`,
    ],
    dir,
  );
  for (const f of [`${name}.csr`, `${name}.ext`]) fs.rmSync(path.join(dir, f), { force: true });
}

const b64url = (b: Buffer | string) => Buffer.from(b).toString('base64url');

/** An ES256 JWT carrying `permissions`, as Temporal's JWT claim mapper reads them. */
export function mintToken(
  signingKeyPem: string,
  claims: { sub: string; permissions: string[]; lifetimeS?: number; nowS?: number },
): string {
  const key = crypto.createPrivateKey(signingKeyPem);
  const now = claims.nowS ?? Math.floor(Date.now() / 1000);
  const header = { alg: 'ES256', typ: 'JWT', kid: keyId(key) };
  const payload = {
    iss: TOKEN_ISSUER,
    sub: claims.sub,
    iat: now,
    exp: now + (claims.lifetimeS ?? TOKEN_LIFETIME_S),
    permissions: claims.permissions,
  };
  const body = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(payload))}`;
  const sig = crypto.sign('sha256', Buffer.from(body), { key, dsaEncoding: 'ieee-p1363' });
  return `${body}.${b64url(sig)}`;
}

/** The key id: a digest of the public key, so a new key never reuses an old id. */
function keyId(key: crypto.KeyObject): string {
  const der = crypto.createPublicKey(key).export({ format: 'der', type: 'spki' });
  return crypto.createHash('sha256').update(der).digest('base64url').slice(0, 16);
}

function writeJwks(file: string, signingKeyPem: string): void {
  const key = crypto.createPrivateKey(signingKeyPem);
  const jwk = crypto.createPublicKey(key).export({ format: 'jwk' });
  fs.writeFileSync(
    file,
    `${JSON.stringify({ keys: [{ ...jwk, kid: keyId(key), alg: 'ES256', use: 'sig' }] }, null, 2)}\n`,
  );
}

const tls = (dir: string, name: string, ca = 'ca'): TlsFiles => ({
  ca: path.join(dir, `${ca}.pem`),
  cert: path.join(dir, `${name}.pem`),
  key: path.join(dir, `${name}.key`),
});

/**
 * The credentials in `dir`: made when missing, reused otherwise; tokens minted for `namespace`.
 * `address` goes into the role files (`<role>.env`, `temporal.toml`).
 */
export function ensureCredentials(
  dir: string,
  opts: { namespace: string; address?: string; log?: Log },
): ClusterCredentials {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const have = (f: string) => fs.existsSync(path.join(dir, f));
  const made = ['ca.pem', 'server.pem', 'ui.pem', 'client.pem', 'wrong-client.pem', 'jwt-signing.key'].every(have);
  if (!made) {
    opts.log?.(`making the cluster's CA, certificates and token signing key in ${dir}`);
    makeCa(dir, 'ca', 'toolplane cluster CA');
    makeLeaf(dir, 'ca', 'server', 'temporal-system', { server: true, names: SERVER_NAMES });
    makeLeaf(dir, 'ca', 'ui', 'temporal-ui');
    makeLeaf(dir, 'ca', 'client', 'toolplane-client');
    makeCa(dir, 'wrong-ca', 'a CA the toolplane cluster does not trust');
    makeLeaf(dir, 'wrong-ca', 'wrong-client', 'toolplane-client');
    const { privateKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
    fs.writeFileSync(path.join(dir, 'jwt-signing.key'), privateKey.export({ format: 'pem', type: 'pkcs8' }), {
      mode: 0o600,
    });
  }
  for (const f of fs.readdirSync(dir)) if (f.endsWith('.key')) fs.chmodSync(path.join(dir, f), 0o600);
  const signingKey = fs.readFileSync(path.join(dir, 'jwt-signing.key'), 'utf8');
  const jwks = path.join(dir, 'jwks.json');
  writeJwks(jwks, signingKey);
  const tokens = Object.fromEntries(
    (Object.keys(ROLES) as Role[]).map((role) => [
      role,
      mintToken(signingKey, { sub: `toolplane-${role}`, permissions: ROLES[role](opts.namespace) }),
    ]),
  ) as Record<Role, string>;
  const creds: ClusterCredentials = {
    dir,
    ca: path.join(dir, 'ca.pem'),
    jwks,
    server: tls(dir, 'server'),
    ui: tls(dir, 'ui'),
    client: tls(dir, 'client'),
    wrongCa: tls(dir, 'wrong-client', 'wrong-ca'),
    tokens,
    signingKey,
  };
  writeRoleFiles(creds, opts.namespace, opts.address);
  return creds;
}

/** The environment a toolplane party connects with: address, namespace, TLS files and its token. */
export function roleEnv(
  creds: ClusterCredentials,
  role: Role,
  address: string,
  namespace: string,
): Record<string, string> {
  return {
    TEMPORAL_ADDRESS: address,
    TEMPORAL_NAMESPACE: namespace,
    TEMPORAL_TLS_CA: creds.ca,
    TEMPORAL_TLS_CERT: creds.client.cert,
    TEMPORAL_TLS_KEY: creds.client.key,
    TEMPORAL_API_KEY: creds.tokens[role],
    // The certificate names localhost and 127.0.0.1; a TLS server name may not be an IP address.
    ...(address.startsWith('127.0.0.1:') ? { TEMPORAL_TLS_SERVER_NAME: 'localhost' } : {}),
  };
}

function writeRoleFiles(creds: ClusterCredentials, namespace: string, address = '127.0.0.1:7233'): void {
  const roles = Object.keys(ROLES) as Role[];
  for (const role of roles) {
    fs.writeFileSync(path.join(creds.dir, `${role}.jwt`), `${creds.tokens[role]}\n`, { mode: 0o600 });
    const env = roleEnv(creds, role, address, namespace);
    const lines = Object.entries(env).map(([k, v]) => `${k}=${v}`);
    fs.writeFileSync(path.join(creds.dir, `${role}.env`), `${lines.join('\n')}\n`, { mode: 0o600 });
  }
  const toml = roles.flatMap((role) => [
    `[profile.${role}]`,
    `address = ${JSON.stringify(address)}`,
    `namespace = ${JSON.stringify(namespace)}`,
    `api_key = ${JSON.stringify(creds.tokens[role])}`,
    `[profile.${role}.tls]`,
    `server_ca_cert_path = ${JSON.stringify(creds.ca)}`,
    `client_cert_path = ${JSON.stringify(creds.client.cert)}`,
    `client_key_path = ${JSON.stringify(creds.client.key)}`,
    ...(address.startsWith('127.0.0.1:') ? ['server_name = "localhost"'] : []),
    '',
  ]);
  fs.writeFileSync(path.join(creds.dir, 'temporal.toml'), toml.join('\n'), { mode: 0o600 });
}
