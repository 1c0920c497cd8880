// Workflow-safe, shared by workflows, the client and the dev server: toolplane's search attributes.
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const PRINCIPAL = defineSearchAttributeKey('ToolplanePrincipal', SearchAttributeType.KEYWORD);
export const MANIFEST_DIGEST = defineSearchAttributeKey('ToolplaneManifestDigest', SearchAttributeType.KEYWORD);
export const TOOLS_CALLED = defineSearchAttributeKey('ToolplaneToolsCalled', SearchAttributeType.KEYWORD_LIST);

export const SEARCH_ATTRIBUTES = [
  { name: PRINCIPAL.name, cliType: 'Keyword' },
  { name: MANIFEST_DIGEST.name, cliType: 'Keyword' },
  { name: TOOLS_CALLED.name, cliType: 'KeywordList' },
] as const;
