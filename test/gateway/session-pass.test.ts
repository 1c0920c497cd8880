// The gateway's MACs alone (no server needed): a pass, a call MAC and a session id verify only for
// what they were made for, with the key they were made with.
import { randomBytes } from 'node:crypto';
import {
  callMac,
  issueSessionPass,
  sessionIdFor,
  sessionOwnedBy,
  verifyCallMac,
  verifySessionPass,
} from '../../activities/identity/session-pass';

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

  it('a call MAC covers the session, the key and the tool', () => {
    const mac = callMac(key, wf, 'k:1', 'tool://payments/refund');
    expect(verifyCallMac(key, wf, 'k:1', 'tool://payments/refund', mac)).toBe(true);
    expect(verifyCallMac(key, wf, 'k:2', 'tool://payments/refund', mac)).toBe(false);
    expect(verifyCallMac(key, wf, 'k:1', 'tool://mail/send_email', mac)).toBe(false);
    expect(verifyCallMac(key, 'toolplane-mcp/other', 'k:1', 'tool://payments/refund', mac)).toBe(false);
    expect(verifyCallMac(other, wf, 'k:1', 'tool://payments/refund', mac)).toBe(false);
    expect(verifyCallMac(key, wf, 'k:1', 'tool://payments/refund', undefined)).toBe(false);
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
