// The secured cluster's set-up without a cluster: its credentials and tokens, the TLS variables
// clients read, and where PostgreSQL's data goes when the clone sits in a folder closed to others.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ensureCredentials, mintToken, ROLES } from '../../scripts/cluster/credentials';
import { closedAncestor, postgresDataDir } from '../../scripts/cluster/postgres';
import { connectionSettings, tlsAliases } from '../../inspect/connection';

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolplane-credentials-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const decode = (part: string) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>;

describe('cluster credentials', () => {
  it('makes a CA, certificates for the servers, the UI and clients, a wrong CA, and a token per role', () => {
    const creds = ensureCredentials(path.join(dir, 'creds'), { namespace: 'default', address: '127.0.0.1:7233' });
    const ca = new crypto.X509Certificate(fs.readFileSync(creds.ca));
    const server = new crypto.X509Certificate(fs.readFileSync(creds.server.cert));
    const client = new crypto.X509Certificate(fs.readFileSync(creds.client.cert));
    const wrong = new crypto.X509Certificate(fs.readFileSync(creds.wrongCa.cert));
    expect(server.verify(ca.publicKey)).toBe(true);
    expect(client.verify(ca.publicKey)).toBe(true);
    expect(wrong.verify(ca.publicKey)).toBe(false);
    expect(server.subject).toContain('CN=temporal-system');
    expect(server.subjectAltName).toContain('DNS:localhost');
    expect(server.subjectAltName).toContain('IP Address:127.0.0.1');
    expect(client.subject).toContain('CN=toolplane-client');
    for (const f of fs.readdirSync(creds.dir).filter((f) => f.endsWith('.key')))
      expect({ f, mode: fs.statSync(path.join(creds.dir, f)).mode & 0o077 }).toEqual({ f, mode: 0 });

    // Each token verifies against the JWKS and carries its role's permissions.
    const jwk = (JSON.parse(fs.readFileSync(creds.jwks, 'utf8')) as { keys: (crypto.JsonWebKey & { kid: string })[] })
      .keys[0]!;
    for (const role of Object.keys(ROLES) as (keyof typeof ROLES)[]) {
      const [h, p, sig] = creds.tokens[role].split('.') as [string, string, string];
      expect(decode(h)).toMatchObject({ alg: 'ES256', kid: jwk.kid });
      expect(decode(p).permissions).toEqual(ROLES[role]('default'));
      const ok = crypto.verify(
        'sha256',
        Buffer.from(`${h}.${p}`),
        { key: crypto.createPublicKey({ key: jwk, format: 'jwk' }), dsaEncoding: 'ieee-p1363' },
        Buffer.from(sig, 'base64url'),
      );
      expect({ role, ok }).toEqual({ role, ok: true });
    }
    expect(ROLES.starter('default')).toEqual(['default:write']);

    // A second start reuses the CA and certificates and mints fresh tokens.
    const again = ensureCredentials(creds.dir, { namespace: 'default' });
    expect(fs.readFileSync(again.ca, 'utf8')).toBe(fs.readFileSync(creds.ca, 'utf8'));

    // The role files connect as that role: the env file and the envconfig profile.
    const env = Object.fromEntries(
      fs
        .readFileSync(path.join(creds.dir, 'operator.env'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => l.split(/=(.*)/s).slice(0, 2) as [string, string]),
    );
    const fromEnv = connectionSettings({}, { ...env, TEMPORAL_CONFIG_FILE: path.join(dir, 'none.toml') });
    const fromProfile = connectionSettings(
      { profile: 'operator' },
      { TEMPORAL_CONFIG_FILE: path.join(creds.dir, 'temporal.toml') },
    );
    for (const s of [fromEnv, fromProfile]) {
      expect(s.address).toBe('127.0.0.1:7233');
      expect(s.apiKey).toBe(again.tokens.operator);
      expect(s.tls).toMatchObject({ serverNameOverride: 'localhost' });
      const crt = typeof s.tls === 'object' ? s.tls?.clientCertPair?.crt : undefined;
      expect(Buffer.from(crt ?? []).toString('utf8')).toContain('BEGIN CERTIFICATE');
    }
  });

  it('mints tokens with the expiry asked for', () => {
    const { privateKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    const t = mintToken(pem, { sub: 's', permissions: ['default:worker'], lifetimeS: 60, nowS: 1000 });
    expect(decode(t.split('.')[1]!)).toMatchObject({ sub: 's', iat: 1000, exp: 1060, permissions: ['default:worker'] });
  });
});

describe('TLS variables', () => {
  it('reads TEMPORAL_TLS_CA/_CERT/_KEY as envconfig’s names, which win when both are set', () => {
    expect(tlsAliases({ TEMPORAL_TLS_CA: 'a', TEMPORAL_TLS_CERT: 'c', TEMPORAL_TLS_KEY: 'k' })).toMatchObject({
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: 'a',
      TEMPORAL_TLS_CLIENT_CERT_PATH: 'c',
      TEMPORAL_TLS_CLIENT_KEY_PATH: 'k',
    });
    expect(tlsAliases({ TEMPORAL_TLS_CA: 'a', TEMPORAL_TLS_SERVER_CA_CERT_PATH: 'b' })).toMatchObject({
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: 'b',
    });
  });

  it('refuses a certificate without its key, naming both variables', () => {
    expect(() => tlsAliases({ TEMPORAL_TLS_CERT: 'c' })).toThrow(/TEMPORAL_TLS_CERT.*TEMPORAL_TLS_KEY/);
    expect(() => connectionSettings({}, { TEMPORAL_TLS_KEY: 'k' })).toThrow(/TEMPORAL_TLS_KEY.*is set/);
  });
});

describe('PostgreSQL data of a clone in a closed folder', () => {
  it('stays in the clone when PostgreSQL can reach it, and moves outside it when a parent is 0700', () => {
    const open = path.join(dir, 'open');
    fs.mkdirSync(open, { mode: 0o755 });
    fs.chmodSync(dir, 0o755);
    expect(postgresDataDir(open, () => {}, { asRoot: true })).toBe(path.join(open, 'pg'));
    // PostgreSQL's own folder is 0700: a warm start keeps it where it is.
    fs.mkdirSync(path.join(open, 'pg'), { mode: 0o700 });
    expect(postgresDataDir(open, () => {}, { asRoot: true })).toBe(path.join(open, 'pg'));

    const closed = path.join(dir, 'closed');
    fs.mkdirSync(path.join(closed, 'clone'), { recursive: true });
    fs.chmodSync(closed, 0o700);
    const data = path.join(closed, 'clone', '.data', 'cluster');
    fs.mkdirSync(data, { recursive: true });
    expect(closedAncestor(data)).toBe(closed);
    const lines: string[] = [];
    const base = path.join(dir, 'base');
    const pg = postgresDataDir(data, (l) => lines.push(l), { asRoot: true, base });
    expect(pg.startsWith(path.join(base, 'toolplane'))).toBe(true);
    expect(closedAncestor(pg)).toBeUndefined();
    expect(lines.join('\n')).toContain(`${closed} is closed to other users (mode 700)`);
    expect(postgresDataDir(data, () => {}, { asRoot: true, base })).toBe(pg); // found again
    expect(postgresDataDir(data, () => {}, { asRoot: false })).toBe(path.join(data, 'pg'));
  });
});
