// Workflow-safe: the ids of changes a running history would replay differently under, each behind
// \`patched()\` (docs/versioning.md, "Which changes need a patch"). One owner, so an id is never reused.

/**
 * A call a person let through despite a violation (a data-flow rule, or what it carries) is sent
 * with the arguments the gate admitted: the trusted values of the protected fields the model
 * retyped, the declared redactions, as an allowed call would be; the effect key follows them. Runs
 * that reached such a call before this change keep sending the model's arguments.
 */
export const OVERRULED_CALL_SENDS_GATED_ARGS = 'toolplane-overruled-call-sends-gated-args';

/**
 * A workflow's own gate that refuses a call unless a person lets it through (\`allow: false,
 * askPerson: true\`) no longer decides it alone: the manifest judges the call first, so its hard
 * limits and data-flow rules refuse before anyone is asked. Runs that reached such a call earlier
 * replay as they ran.
 */
export const OWN_QUESTION_JUDGED_BY_MANIFEST = 'toolplane-own-question-judged-by-manifest';
