// The gateway's MACs and signatures alone (no server needed): a pass, a call's signature and a session
// id verify only for what they were made for, with the key they were made with; the workflow-safe
// Ed25519 check the session's validators use agrees with Node's crypto.
import { generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import {
  callSignature,
  endSignature,
  issueSessionPass,
  sessionIdFor,
  sessionOwnedBy,
  sessionVerifyKey,
  verifyCallSignature,
  verifySessionPass,
} from '../../activities/identity/session-pass';
import { ed25519Verify } from '../../common/ed25519';
import { callProofFields, callSubject, endProofFields, proofRefusal } from '../../common/session-proof';
import { proofMessage } from '../../common/worker-signature';

const key = randomBytes(32);
const other = randomBytes(32);
const desk = { principal: 'desk@corp.example', groups: ['support'], issuer: 'https://issuer.test' };
const wf = 'toolplane-mcp/abc';

describe('session pass, call MAC and session id', () => {
  it('a pass verifies for its workflow id and key only, until it expires', () => {
    const pass = issueSessionPass(key, wf, desk, 60_000);
    expect(verifySessionPass(key, wf, pass)).toBeUndefined();
    expect(verifySessionPass(key, 'toolplane-mcp/other', pass)).toBe('bad_signature');
    expect(verifySessionPass(other, wf, pass)).toBe('bad_signature');
    expect(verifySessionPass(key, wf, { ...pass, identity: { ...desk, principal: 'cfo@corp.example' } })).toBe(
      'bad_signature',
    );
    expect(verifySessionPass(key, wf, { ...pass, identity: { ...desk, groups: ['finance-approvers'] } })).toBe(
      'bad_signature',
    );
    expect(verifySessionPass(key, wf, { ...pass, expiresAt: pass.expiresAt + 1 })).toBe('bad_signature');
    expect(verifySessionPass(key, wf, pass, pass.expiresAt)).toBe('expired');
  });

  it('a pass names the key its session checks signatures with, under its MAC', () => {
    const pass = issueSessionPass(key, wf, desk, 60_000);
    expect(pass.callKey).toBe(sessionVerifyKey(key));
    expect(sessionVerifyKey(other)).not.toBe(pass.callKey);
    expect(verifySessionPass(key, wf, { ...pass, callKey: sessionVerifyKey(other) })).toBe('bad_signature');
  });

  it("a call's signature covers the session, the key, the tool, the arguments, what was given and its time", () => {
    const refund = { account_id: 'acct_alice_001', amount_cents: 2500, currency: 'EUR' };
    const call = { key: 'k:1', toolId: 'tool://payments/refund', args: refund };
    const at = Date.now();
    const sig = callSignature(key, wf, callSubject(call, at));
    const ok = (c: typeof call & { given?: unknown }, w = wf, k = key, t = at) =>
      verifyCallSignature(k, w, callSubject(c, t), sig);
    expect(ok(call)).toBe(true);
    // Key order is not a difference: the digest is of the canonical arguments.
    expect(ok({ ...call, args: { currency: 'EUR', amount_cents: 2500, account_id: 'acct_alice_001' } })).toBe(true);
    expect(ok({ ...call, args: { ...refund, amount_cents: 95000 } })).toBe(false);
    expect(ok({ ...call, key: 'k:2' })).toBe(false);
    expect(ok({ ...call, toolId: 'tool://mail/send_email' })).toBe(false);
    expect(ok({ ...call, given: { amount: 2500 } })).toBe(false);
    expect(ok(call, 'toolplane-mcp/other')).toBe(false);
    expect(ok(call, wf, other)).toBe(false);
    expect(ok(call, wf, key, at + 1)).toBe(false);
    expect(verifyCallSignature(key, wf, callSubject(call, at), undefined)).toBe(false);
    // The validator's check (pure JS, the public key only) agrees, and refuses a stale one.
    const pub = sessionVerifyKey(key);
    const fields = (c: { key: string; toolId: string; args: unknown }) => (t: number) =>
      callProofFields(wf, callSubject(c, t));
    expect(proofRefusal(pub, { sig, issuedAt: at }, fields(call), at)).toBeUndefined();
    expect(proofRefusal(pub, { sig, issuedAt: at }, fields({ ...call, args: {} }), at)?.reason).toBe('bad_proof');
    expect(proofRefusal(pub, { sig, issuedAt: at }, fields(call), at + 11 * 60_000)?.reason).toBe('stale');
    expect(proofRefusal(pub, { issuedAt: at }, fields(call), at)?.reason).toBe('malformed');
    const end = endSignature(key, wf, at);
    expect(proofRefusal(pub, { sig: end, issuedAt: at }, (t) => endProofFields(wf, t), at)).toBeUndefined();
    expect(proofRefusal(pub, { sig: end, issuedAt: at }, fields(call), at)?.reason).toBe('bad_proof');
  });

  it("the validators' Ed25519 check agrees with Node's crypto, and refuses what was changed", () => {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const pub = publicKey.export({ format: 'jwk' }).x!;
    for (let i = 0; i < 8; i++) {
      const message = proofMessage(['case', i, randomBytes(i * 13).toString('base64url')]);
      const sig = sign(null, message, privateKey);
      expect(ed25519Verify(pub, message, sig.toString('base64url'))).toBe(true);
      const changed = Buffer.from(sig);
      changed[i * 7]! ^= 1;
      expect(ed25519Verify(pub, message, changed.toString('base64url'))).toBe(false);
      const other = Buffer.from(message);
      other[0]! ^= 1;
      expect(ed25519Verify(pub, other, sig.toString('base64url'))).toBe(false);
    }
    const message = proofMessage(['x']);
    const sig = sign(null, message, privateKey);
    // S + L (the same S mod the group order) is refused: no second form of a signature.
    const L = 2n ** 252n + 27742317777372353535851937790883648493n;
    let s = 0n;
    for (let i = 63; i >= 32; i--) s = (s << 8n) | BigInt(sig[i]!);
    let big = s + L;
    const malleable = Buffer.from(sig);
    for (let i = 32; i < 64; i++) {
      malleable[i] = Number(big & 0xffn);
      big >>= 8n;
    }
    expect(ed25519Verify(pub, message, malleable.toString('base64url'))).toBe(false);
    expect(ed25519Verify('not-a-key', message, sig.toString('base64url'))).toBe(false);
    expect(ed25519Verify(pub, message, 'short')).toBe(false);
  });

  it("a session id is its principal's, under this key", () => {
    const sid = sessionIdFor(key, desk.principal);
    expect(sid).toMatch(/^[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{22}$/);
    expect(sessionOwnedBy(key, sid, desk.principal)).toBe(true);
    expect(sessionOwnedBy(key, sid, 'mallory@corp.example')).toBe(false);
    expect(sessionOwnedBy(other, sid, desk.principal)).toBe(false);
    expect(sessionOwnedBy(key, `${sid}x`, desk.principal)).toBe(false);
    expect(sessionOwnedBy(key, 'not-a-session', desk.principal)).toBe(false);
  });
});
