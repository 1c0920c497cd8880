// The manifest's approvers, without a server: who may decide what, the warnings a manifest gets, the
// worker that refuses approvers it cannot verify, and where the CLI takes an approver's credential.
import fs from 'node:fs';
import path from 'node:path';
import { mayDecide, type ApproversDecl, type DecisionAsked } from '../../catalog/approvers';
import { checkConsistency } from '../../catalog/consistency';
import { ToolplaneError } from '../../catalog/errors';
import { Manifest } from '../../catalog/manifest';
import { CREDENTIAL_ENV, decider } from '../../cli/decide';
import { ToolplanePlugin } from '../../plugin';
import type { PendingEscalation } from '../../workflows/escalation';
import { answerHint } from '../../cli/escalations';
import { APPROVER_TOKEN, CallTally, detailsOf, updatePayload } from '../../workflows/run-status';
import { supportDesk } from '../support/desk';
import { exampleManifest, testDir } from '../support/env';

const REFUND = 'tool://payments/refund';
const MAIL = 'tool://mail/send_email';

const approvers = Manifest.shape.approvers.parse([
  { tools: [REFUND], groups: ['finance'], decisions: ['approve', 'deny'] },
  { tools: [REFUND], subjects: ['cfo@corp.example'] },
  { tools: '*', groups: ['oncall'], decisions: ['resolve'] },
  { tools: [MAIL], groups: ['comms'], rules: ['protected_field'] },
  { tools: [MAIL], subjects: ['self@corp.example'], own_run: true },
]) as ApproversDecl;

const ask = (over: Partial<DecisionAsked>): DecisionAsked => ({
  toolId: REFUND,
  rule: 'protected_field:/account_id',
  kind: 'approve',
  subject: 'ann@corp.example',
  groups: [],
  runPrincipal: 'desk@corp.example',
  ...over,
});

describe('mayDecide', () => {
  it('accepts a subject or group an entry names for the tool and the decision', () => {
    expect(mayDecide(approvers, ask({ groups: ['finance'] }))).toEqual({ ok: true });
    expect(mayDecide(approvers, ask({ kind: 'deny', groups: ['finance'] }))).toEqual({ ok: true });
    expect(mayDecide(approvers, ask({ subject: 'cfo@corp.example', kind: 'resolve' }))).toEqual({ ok: true });
    expect(mayDecide(approvers, ask({ toolId: MAIL, kind: 'resolve', groups: ['oncall'] }))).toEqual({ ok: true });
  });

  it('refuses another tool, another kind of decision, another rule, or nobody named', () => {
    const no = { ok: false, reason: 'not_an_approver' };
    expect(mayDecide(approvers, ask({}))).toMatchObject(no);
    expect(mayDecide(approvers, ask({ toolId: MAIL, groups: ['finance'] }))).toMatchObject(no);
    expect(mayDecide(approvers, ask({ kind: 'resolve', groups: ['finance'] }))).toMatchObject(no);
    expect(mayDecide(approvers, ask({ groups: ['oncall'] }))).toMatchObject(no);
    // A rule-scoped entry: its rule family, never another rule, never an in-doubt call.
    const comms = { toolId: MAIL, groups: ['comms'] };
    expect(mayDecide(approvers, ask({ ...comms, rule: 'protected_field:/to' }))).toEqual({ ok: true });
    expect(mayDecide(approvers, ask({ ...comms, rule: 'taint:/body' }))).toMatchObject(no);
    expect(mayDecide(approvers, ask({ ...comms, rule: 'protected_fieldish' }))).toMatchObject(no);
    expect(mayDecide(approvers, ask({ ...comms, rule: undefined, kind: 'resolve' }))).toMatchObject(no);
    // No section: nobody.
    expect(mayDecide(undefined, ask({ groups: ['finance'] }))).toMatchObject({
      ok: false,
      reason: 'not_an_approver',
      message: expect.stringMatching(/declares no approvers/),
    });
  });

  it("refuses the run's own principal unless the entry that names it says own_run", () => {
    expect(mayDecide(approvers, ask({ subject: 'desk@corp.example', groups: ['finance'] }))).toMatchObject({
      ok: false,
      reason: 'own_run',
    });
    expect(
      mayDecide(approvers, ask({ toolId: MAIL, subject: 'self@corp.example', runPrincipal: 'self@corp.example' })),
    ).toEqual({ ok: true });
  });
});

describe('a manifest with approvers', () => {
  it('warns about a tool that asks a person whom no entry may answer', () => {
    const base = exampleManifest();
    const m = Manifest.parse({
      ...base,
      tools: base.tools.map((t) => (t.id === REFUND || t.id === MAIL ? { ...t, approval: 'on_violation' } : t)),
      approvers: [{ tools: [REFUND], subjects: ['cfo@corp.example'], decisions: ['approve', 'deny'] }],
    });
    const { errors, warnings } = checkConsistency(m);
    expect(errors).toEqual([]);
    expect(warnings.map((w) => w.path).sort()).toEqual(
      // The mail tool asks and escalates; the refund reconciles and escalates what it cannot tell.
      ['tools[2].recovery', 'tools[3].approval', 'tools[3].recovery'].sort(),
    );
  });

  it('refuses to start a worker without identity: nobody could be verified as an approver', () => {
    const dir = testDir('approvers-plugin');
    const base = exampleManifest();
    const manifest = Manifest.parse({ ...base, approvers: [{ tools: '*', subjects: ['cfo@corp.example'] }] });
    const make = () =>
      new ToolplanePlugin({ manifest, tools: supportDesk(dir).tools, ticketKey: 'a'.repeat(64), verifySources: false });
    expect(make).toThrow(ToolplaneError);
    expect(make).toThrow(/declares approvers, but this worker has no identity/);
    try {
      make();
    } catch (err) {
      expect((err as ToolplaneError).code).toBe('IdentityConfigInvalid');
    }
  });
});

describe("the CLI's approver credential", () => {
  const dir = testDir('approvers-cli');
  const file = path.join(dir, 'token');
  fs.writeFileSync(file, 'file.jwt.token\n');

  it('comes from --credential, --credential-file or the environment, in that order; by only when given', () => {
    const env = { USER: 'alice', [CREDENTIAL_ENV]: 'env.jwt.token' };
    expect(decider({ credential: 'flag.jwt.token' }, env)).toEqual({ credential: 'flag.jwt.token' });
    expect(decider({ credentialFile: file }, env)).toEqual({ credential: 'file.jwt.token' });
    expect(decider({}, env)).toEqual({ credential: 'env.jwt.token' });
    expect(decider({ by: 'ann@corp.example' }, env)).toEqual({ by: 'ann@corp.example', credential: 'env.jwt.token' });
    // Without a credential, as before: the name given, else $USER.
    expect(decider({}, { USER: 'alice' })).toEqual({ by: 'alice' });
  });

  it('refuses two credentials, an unreadable file and an empty one', () => {
    expect(() => decider({ credential: 'a', credentialFile: file }, {})).toThrow(/--credential or --credential-file/);
    expect(() => decider({ credentialFile: path.join(dir, 'missing') }, {})).toThrow(/cannot read \(ENOENT\)/);
    expect(() => decider({ credential: ' ' }, {})).toThrow(/empty/);
  });
});

describe('the Web UI answer on a worker that verifies who decides', () => {
  const waiting: PendingEscalation = {
    effectKey: 'ek-1',
    toolId: REFUND,
    position: 2,
    reason: 'refused; a person may approve it',
    deadline: Date.UTC(2030, 0, 1),
    kind: 'approval',
  };

  it("asks for the approver's own credential instead of a name", () => {
    expect(JSON.parse(updatePayload(waiting, 'approve', true))).toEqual({
      effectKey: 'ek-1',
      decision: 'approve',
      credential: APPROVER_TOKEN,
    });
    const details = detailsOf(new CallTally(), [waiting], { credentialed: true, workflowId: 'wf-1' });
    expect(details).toContain(`replace \`${APPROVER_TOKEN}\` with your own token`);
    expect(details).not.toContain('"by"');
    // The CLI command that answers it carries the credential too.
    expect(details).toContain(
      'Or from a shell (your token in `$TOOLPLANE_CREDENTIAL`): `npx toolplane approve wf-1 ek-1 --credential "$TOOLPLANE_CREDENTIAL"`',
    );
    // Without identity, as before.
    const plain = detailsOf(new CallTally(), [waiting], { workflowId: 'wf-1' });
    expect(plain).toContain('`"by"` names who decided');
    expect(plain).toContain('Or from a shell: `npx toolplane approve wf-1 ek-1`');
  });

  it("prints the CLI's answer with --credential where the run says its worker verifies who decides", () => {
    expect(answerHint('wf-1', { ...waiting, needsCredential: true })).toEqual([
      'approve: npx toolplane approve wf-1 ek-1 --credential "$TOOLPLANE_CREDENTIAL"',
      'deny:    npx toolplane deny wf-1 ek-1 --reason "<why>" --credential "$TOOLPLANE_CREDENTIAL"',
    ]);
    expect(answerHint('wf-1', { ...waiting, kind: 'in_doubt', needsCredential: true })[0]).toBe(
      'retry:   npx toolplane resolve wf-1 ek-1 retry --credential "$TOOLPLANE_CREDENTIAL"',
    );
    expect(answerHint('wf-1', waiting)[0]).toBe('approve: npx toolplane approve wf-1 ek-1');
  });
});
