// A declaration built in code digests as the same declaration written out: a field set to `undefined`
// (`{ ...tool, retry: undefined }`) is a field left out (issue 50).
import { digestOf, toolDigest } from '../../catalog/digest';
import type { ToolDecl } from '../../catalog/manifest';
import { exampleManifest } from '../support/env';

const refund = (): ToolDecl => exampleManifest().tools.find((t) => t.id === 'tool://payments/refund')!;

describe('digests of declarations built in code', () => {
  it('a field set to undefined digests as the field left out', () => {
    expect(digestOf({ a: 1, b: undefined, c: { d: undefined, e: 'x' } })).toBe(digestOf({ a: 1, c: { e: 'x' } }));
  });

  it('a parsed declaration keeps the digest it had', () => {
    const parsed = refund();
    expect(toolDigest(parsed)).toBe(digestOf(parsed));
  });
});
