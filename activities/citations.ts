// What a tool's output cited (`ctx.cite`): each fact's `produced_by`, verified against the ledger and
// the run's principal, so the gate trusts a cited value only where its origin is trusted.
import { Context } from '@temporalio/activity';
import { sharesFactsWith } from '../catalog/authority';
import type { Manifest } from '../catalog/manifest';
import type { CitedOrigin } from '../common/wire';
import { leaves } from '../common/json-leaves';
import type { LedgerPublicKeys } from '../ledger/keys';
import { verifyProducedBy } from '../ledger/verify';
import type { LedgerRef } from './tool';

export interface Citation {
  producedBy: LedgerRef | undefined;
  args: Record<string, unknown>;
}

/** Verifies what a tool cited; a reference that does not verify, or a verifier that fails, leaves its values untrusted. */
export async function verifyCitations(
  citations: Citation[],
  publicKeys: LedgerPublicKeys | undefined,
  reader: { principal: string; manifest: Manifest },
): Promise<CitedOrigin[]> {
  const out: CitedOrigin[] = [];
  for (const c of citations) {
    const values = leaves(c.args)
      .map((l) => l.value)
      .filter((v): v is string | number => typeof v === 'string' || typeof v === 'number');
    if (!c.producedBy) {
      out.push({ values, trusted: false, reason: 'no produced_by' });
      continue;
    }
    if (!publicKeys) {
      out.push({ values, trusted: false, reason: 'this worker has no ledger keys to verify with' });
      continue;
    }
    try {
      const v = await verifyProducedBy(Context.current().client, c.producedBy, { publicKeys, args: c.args });
      if (!v.valid) {
        out.push({ values, trusted: false, reason: `${v.reason}: ${v.message}` });
        continue;
      }
      const o = v.origin;
      // A fact is its writer's words: trusted for another principal only where the writer shares it.
      const ours =
        o.principal === reader.principal || sharesFactsWith(reader.manifest.principals, o.principal, reader.principal);
      const reason = !o.trustedArgs
        ? 'the origin call had untrusted arguments'
        : !ours
          ? `written by ${o.principal}, who does not share facts with ${reader.principal}`
          : undefined;
      out.push({
        values,
        trusted: reason === undefined,
        origin: `${o.workflowId}/${o.runId}/${o.effectKey}`,
        principal: o.principal,
        ...(reason ? { reason } : {}),
      });
    } catch (err) {
      out.push({ values, trusted: false, reason: `could not verify: ${(err as Error).message}` });
    }
  }
  return out;
}
