// Workflow-safe, shared by workflows, the client and the dev server: toolplane's search attributes.
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const PRINCIPAL = defineSearchAttributeKey('ToolplanePrincipal', SearchAttributeType.KEYWORD);
export const MANIFEST_DIGEST = defineSearchAttributeKey('ToolplaneManifestDigest', SearchAttributeType.KEYWORD);
export const TOOLS_CALLED = defineSearchAttributeKey('ToolplaneToolsCalled', SearchAttributeType.KEYWORD_LIST);
/** How many calls of the run the gate refused or a person denied. */
export const REFUSALS = defineSearchAttributeKey('ToolplaneRefusals', SearchAttributeType.INT);
/** Whom the run waits for: a person's approval, a person's decision on an in-doubt call, or nobody. */
export const WAITING_FOR = defineSearchAttributeKey('ToolplaneWaitingFor', SearchAttributeType.KEYWORD);

export const WaitingFor = {
  Approval: 'approval',
  Escalation: 'escalation',
  /** The run's principal is asked to vouch for a value (`principal_confirms`). */
  Confirmation: 'confirmation',
  None: 'none',
} as const;
export type WaitingFor = (typeof WaitingFor)[keyof typeof WaitingFor];

export const SEARCH_ATTRIBUTES = [
  { name: PRINCIPAL.name, cliType: 'Keyword' },
  { name: MANIFEST_DIGEST.name, cliType: 'Keyword' },
  { name: TOOLS_CALLED.name, cliType: 'KeywordList' },
  { name: REFUSALS.name, cliType: 'Int' },
  { name: WAITING_FOR.name, cliType: 'Keyword' },
] as const;
