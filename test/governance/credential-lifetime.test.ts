// Issue 46 (1): a credential lives no longer than the identity configuration allows, so a token leaked
// before its one use, and its spend record, stay open no longer than that bound.
import { SignJWT, importJWK } from 'jose';
import { CredentialVerifier, WORKFLOW_ID_CLAIM } from '../../identity/credentials';
import { generateIssuerKey, signCredential, type IssuerKey } from '../../identity/mint';

const ISSUER = 'https://idp.example';
const opts = { workflowId: 'wf-1', requireBinding: true, what: 'the run' };

async function signed(key: IssuerKey, opt: { iat?: number; exp: number }): Promise<string> {
  const jwt = new SignJWT({ [WORKFLOW_ID_CLAIM]: 'wf-1' })
    .setProtectedHeader({ alg: 'EdDSA', kid: key.privateJwk.kid })
    .setIssuer(ISSUER)
    .setAudience('aud')
    .setSubject('agent:desk')
    .setJti(`j-${Math.random()}`)
    .setExpirationTime(opt.exp);
  if (opt.iat !== undefined) jwt.setIssuedAt(opt.iat);
  return jwt.sign(await importJWK(key.privateJwk, 'EdDSA'));
}

describe('credential lifetime', () => {
  it('refuses a token living ten years, by default, naming the bound; a 10-minute token verifies', async () => {
    const key = await generateIssuerKey(ISSUER, 'k1');
    const verifier = new CredentialVerifier({ issuers: [{ issuer: ISSUER, audience: 'aud', jwks: key.jwks }] });
    const now = Math.floor(Date.now() / 1000);
    const tenYears = await signed(key, { iat: now, exp: now + 10 * 365 * 86400 });
    await expect(verifier.verify(tenYears, opts)).rejects.toMatchObject({
      code: 'IdentityRefused',
      data: { reason: 'too_long_lived' },
      message: expect.stringContaining('3600s'),
    });
    const noIat = await signed(key, { exp: now + 2 * 3600 });
    await expect(verifier.verify(noIat, opts)).rejects.toMatchObject({ data: { reason: 'too_long_lived' } });
    const ok = await signCredential(key, { audience: 'aud', subject: 'agent:desk', workflowId: 'wf-1' });
    await expect(verifier.verify(ok, opts)).resolves.toMatchObject({ principal: 'agent:desk' });
  });

  it('the bound is configurable: a 2-hour token passes under maxCredentialLifetimeSeconds 10800', async () => {
    const key = await generateIssuerKey(ISSUER, 'k2');
    const verifier = new CredentialVerifier({
      issuers: [{ issuer: ISSUER, audience: 'aud', jwks: key.jwks }],
      maxCredentialLifetimeSeconds: 10800,
    });
    const now = Math.floor(Date.now() / 1000);
    await expect(verifier.verify(await signed(key, { iat: now, exp: now + 7200 }), opts)).resolves.toMatchObject({
      principal: 'agent:desk',
    });
  });
});
