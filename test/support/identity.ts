// A test issuer: its key, the identity a worker trusts it with, and credentials for runs and approvers.
import { generateIssuerKey, signCredential, type IssuerKey } from '../../identity/mint';
import type { IdentityConfig } from '../../identity/credentials';

export const TEST_AUDIENCE = 'toolplane-test';

export interface TestIssuer {
  key: IssuerKey;
  identity: IdentityConfig;
  /** A run's credential, bound to its workflow id. */
  runCredential(subject: string, workflowId: string, groups?: string[]): Promise<string>;
  /** An approver's credential (bound to no workflow). */
  approverCredential(subject: string, groups?: string[]): Promise<string>;
}

export async function testIssuer(issuer = 'https://issuer.test'): Promise<TestIssuer> {
  const key = await generateIssuerKey(issuer, 'test-1');
  return {
    key,
    // The suites mint a run's credential before they build its input, so this issuer's tokens bind the
    // workflow id only (`requireInputBinding: false`); test/governance/start-race.test.ts runs the default.
    identity: { issuers: [{ issuer, audience: TEST_AUDIENCE, jwks: key.jwks, requireInputBinding: false }] },
    runCredential: (subject, workflowId, groups) =>
      signCredential(key, { audience: TEST_AUDIENCE, subject, workflowId, groups }),
    approverCredential: (subject, groups) => signCredential(key, { audience: TEST_AUDIENCE, subject, groups }),
  };
}
