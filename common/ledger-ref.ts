// Workflow-safe: the shape of a ledger reference (`produced_by`), which names the journal entry that
// caused a call and is signed by the worker that served it. The run states the decision it carries;
// the worker signs it (ledger/keys.ts) and verifiers check it (ledger/verify.ts). Carries digests and
// identities only, never argument values or secrets.
import { z } from 'zod';

/** How the run decided the call; `ungoverned` for a call no gate saw (`toolRun`). */
export const LedgerDecision = z.enum(['allowed', 'approved', 'ungoverned']);
export type LedgerDecision = z.infer<typeof LedgerDecision>;

export const LedgerRef = z
  .object({
    v: z.literal(1),
    workflowId: z.string().min(1),
    runId: z.string().min(1),
    /** The effect key: the activity id of the call in the run's history. */
    effectKey: z.string().min(1),
    toolId: z.string().min(1),
    /** Who the run acted for, from the ticket the worker issued it. */
    principal: z.string().min(1),
    /** `sha256:` over the canonical JSON of the governed arguments, as the tool received them. */
    argsDigest: z.string().regex(/^sha256:[0-9a-f]{64}$/),
    decision: LedgerDecision,
    /** Every argument was trusted when the run decided (the user's words, or facts of verified trusted origin). */
    trustedArgs: z.boolean(),
    /** Which of the worker's keys signed; verifiers look its public key up by this id. */
    keyId: z.string().min(1),
    /** Ed25519 over `signedBytes(ref)`, base64url. */
    signature: z.string().min(1),
  })
  .strict();

/** A reference to the journal entry that caused a call: run, effect, tool, argument digest, decision; signed. */
export type LedgerRef = z.infer<typeof LedgerRef>;
export type UnsignedLedgerRef = Omit<LedgerRef, 'signature'>;
