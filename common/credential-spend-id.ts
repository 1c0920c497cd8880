// Shared by the worker and the operator's tools: the one spelling of the record that a credential
// was spent. Each credential the worker accepts is spent once in Temporal itself: a workflow under
// this id, started on a task queue no worker polls, open until the credential expires.

const PREFIX = 'toolplane-credential/';

/** The task queue spent-credential records are started on; nothing polls it, so they run no code. */
export const SPENT_CREDENTIALS_QUEUE = 'toolplane-spent-credentials';

/** The workflow type a spent-credential record is listed under in the Web UI. */
export const SPENT_CREDENTIAL_TYPE = 'toolplaneCredentialSpent';

/** `toolplane-credential/<digest>`: the id of the record that the credential with this digest was spent. */
export function spentCredentialWorkflowId(digest: string): string {
  return `${PREFIX}${digest}`;
}
