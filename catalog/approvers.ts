// Workflow-safe: who may answer a call that waits for a person. The manifest's `approvers` section
// names, per tool (and optionally per gate rule), the verified subjects and groups whose decisions a
// worker with an identity accepts; the worker checks an approver's credential against it.
import { z } from 'zod';
import { toolIdText } from './tool-id';

/** What a person may decide: `approve`/`deny` an approval; `resolve` an in-doubt call (retry, landed, abort). */
export const DecisionKind = { Approve: 'approve', Deny: 'deny', Resolve: 'resolve' } as const;
export type DecisionKind = (typeof DecisionKind)[keyof typeof DecisionKind];
const DECISION_KINDS = [DecisionKind.Approve, DecisionKind.Deny, DecisionKind.Resolve] as const;

/** The decision kind an escalation decision is: an in-doubt answer (retry, landed, abort) is a `resolve`. */
export function decisionKindOf(decision: string): DecisionKind {
  return decision === 'approve' ? DecisionKind.Approve : decision === 'deny' ? DecisionKind.Deny : DecisionKind.Resolve;
}

const toolIdOrAll = z
  .union([
    z.literal('*'),
    z
      .array(toolIdText('a tool identity "tool://server/name" or "ext:<plugin>:<name>"'))
      .min(1, 'at least one tool, or "*"'),
  ])
  .describe(
    'The tools whose waiting calls these approvers may decide: exact identities, or "*" for every declared tool.',
  );

/**
 * One declaration of who may decide what. A decision is accepted when some entry covers its tool,
 * its rule (for an approval) and its kind, and names the approver's verified subject or one of its
 * verified groups; and the approver is not the run's own principal, unless that entry says `own_run`.
 */
export const ApproverDecl = z
  .strictObject({
    tools: toolIdOrAll,
    rules: z
      .array(z.string().regex(/^[a-z_]+(:.+)?$/, 'a rule such as "protected_field" or "protected_field:/account_id"'))
      .min(1, 'at least one rule, or leave rules out')
      .optional()
      .describe(
        "Only approvals asked under these rules: a rule's name (`protected_field`, `taint`, `sensitivity`, `egress`, `spend`, `carried`, `approval`) or a full rule (`protected_field:/account_id`). Absent: every rule; an entry with rules never covers `resolve`.",
      ),
    subjects: z
      .array(z.string().min(1))
      .default([])
      .describe("Verified subjects (the `sub` of the approver's token, exactly) who may decide."),
    groups: z
      .array(z.string().min(1))
      .default([])
      .describe("Groups (in the approver's token's groups claim): any member may decide."),
    decisions: z
      .array(z.enum(DECISION_KINDS))
      .min(1, 'at least one decision, or leave decisions out')
      .optional()
      .describe('Which decisions: `approve`, `deny` (approvals), `resolve` (in-doubt calls). Absent: all three.'),
    own_run: z
      .boolean()
      .default(false)
      .describe(
        'May an approver decide a call of a run acting for that same principal? Default: nobody approves their own run.',
      ),
  })
  .refine((d) => d.subjects.length > 0 || d.groups.length > 0, {
    message: 'an approvers entry names at least one subject or group',
    path: ['subjects'],
  })
  .meta({
    description: 'Who may decide which waiting calls: names subjects or groups, for tools, rules and decision kinds.',
    examples: [{ tools: ['tool://payments/refund'], groups: ['support-leads'] }],
  });
export type ApproverDecl = z.infer<typeof ApproverDecl>;

/** Who may decide which waiting calls. Declaring it needs a worker that verifies credentials (`identity`). */
export const ApproversDecl = z
  .array(ApproverDecl)
  .describe(
    'Who may decide calls that wait for a person (approve, deny, resolve), per tool. Needs a worker with an `identity`.',
  );
export type ApproversDecl = z.infer<typeof ApproversDecl>;

/** An approvers section as written (defaults not yet applied) or as parsed. */
type Approvers = readonly z.input<typeof ApproverDecl>[];

/** A decision to check: what waits, who answers, for whose run. */
export interface DecisionAsked {
  toolId: string;
  /** The gate's rule an approval was asked under (none for an in-doubt call). */
  rule?: string;
  kind: DecisionKind;
  /** The approver's verified subject and groups. */
  subject: string;
  groups: readonly string[];
  /** The principal the run acts for. */
  runPrincipal: string;
}

export type ApproverVerdict = { ok: true } | { ok: false; reason: 'not_an_approver' | 'own_run'; message: string };

function covers(entry: z.input<typeof ApproverDecl>, asked: DecisionAsked): boolean {
  if (entry.tools !== '*' && !entry.tools.includes(asked.toolId)) return false;
  if (!(entry.decisions ?? DECISION_KINDS).includes(asked.kind)) return false;
  if (entry.rules) {
    const rule = asked.rule;
    if (rule === undefined || !entry.rules.some((r) => r === rule || rule.startsWith(`${r}:`))) return false;
  }
  return true;
}

function names(entry: z.input<typeof ApproverDecl>, asked: DecisionAsked): boolean {
  return (entry.subjects ?? []).includes(asked.subject) || (entry.groups ?? []).some((g) => asked.groups.includes(g));
}

/** May this verified approver make this decision? Fails closed: no section, or no entry, is no. */
export function mayDecide(approvers: Approvers | undefined, asked: DecisionAsked): ApproverVerdict {
  const what = `${asked.kind} ${asked.toolId}${asked.rule ? ` (${asked.rule})` : ''}`;
  const named = (approvers ?? []).filter((e) => covers(e, asked) && names(e, asked));
  if (named.length === 0)
    return {
      ok: false,
      reason: 'not_an_approver',
      message: approvers
        ? `${asked.subject} is not a declared approver who may ${what} (the manifest's approvers name neither the subject nor any of its groups [${asked.groups.join(', ')}] for it)`
        : `this worker's manifest declares no approvers, so nobody may ${what}`,
    };
  if (asked.subject === asked.runPrincipal && !named.some((e) => e.own_run === true))
    return {
      ok: false,
      reason: 'own_run',
      message: `${asked.subject} is the principal this run acts for and may not ${what} in its own run (no approvers entry for it says own_run)`,
    };
  return { ok: true };
}
