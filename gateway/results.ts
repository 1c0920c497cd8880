// How a governed call's outcome reads to an MCP client: a result for what the tool did, a tool
// execution error (isError) for what the plane refused, what failed, and what waits for a person.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ArgumentProblem } from '../catalog/errors';
import { mcpSessionWorkflowId, type ConfirmationQuestion, type McpCallOutcome } from '../common/gateway-protocol';
import { shellWord } from '../common/shell-word';

const text = (t: string): CallToolResult['content'] => [{ type: 'text', text: t }];

/** What the client reads for a call that waits for a person: who decides, how, and how to learn the outcome. */
export function waitingText(
  sessionId: string,
  o: { effectKey: string; reason: string; approvers: string; question?: ConfirmationQuestion },
): string {
  const wf = mcpSessionWorkflowId(sessionId);
  if (o.question)
    return (
      `waiting for the principal to confirm: ${o.reason} effect key ${o.effectKey}. Only ${o.approvers} answers: ` +
      `in this request where the client takes elicitations (MCP 2026-07-28 input_required), else with their own ` +
      `credential: \`toolplane confirm ${wf} ${o.effectKey} ${shellWord(String(o.question.value))}\` (or \`toolplane reject\`). ` +
      'Repeat this call with the same idempotencyKey to get its outcome.'
    );
  return (
    `waiting for a person: ${o.reason}. effect key ${o.effectKey}. ` +
    `An approver (${o.approvers}) decides with \`toolplane approve ${mcpSessionWorkflowId(sessionId)} ${o.effectKey}\` ` +
    'or in the Web UI; repeat this call with the same idempotencyKey to get its outcome.'
  );
}

/**
 * The MCP result of a call's outcome. A keyless repeat answered with an earlier call's outcome says so in
 * `_meta["toolplane/sameCallAs"]` (that call's key in the session; its effect key is the same).
 */
export function toolResult(sessionId: string, o: McpCallOutcome): CallToolResult {
  const result = outcomeResult(sessionId, o);
  if (o.sameCallAs === undefined) return result;
  return { ...result, _meta: { ...result._meta, 'toolplane/sameCallAs': o.sameCallAs } };
}

function outcomeResult(sessionId: string, o: McpCallOutcome): CallToolResult {
  switch (o.status) {
    case 'completed': {
      const structured =
        o.output !== null && typeof o.output === 'object' && !Array.isArray(o.output)
          ? { structuredContent: o.output as Record<string, unknown> }
          : {};
      return {
        content: text(JSON.stringify(o.output ?? null)),
        ...structured,
        _meta: { 'toolplane/status': 'completed', 'toolplane/effectKey': o.effectKey },
      };
    }
    case 'refused':
      return {
        isError: true,
        content: text(`refused by toolplane (${o.code}${o.rule ? `, rule ${o.rule}` : ''}): ${o.reason}`),
        _meta: { 'toolplane/status': 'refused', 'toolplane/code': o.code, ...effectKeyMeta(o.effectKey) },
      };
    case 'failed':
      return {
        isError: true,
        content: text(`the call failed (${o.code}): ${o.message}`),
        _meta: { 'toolplane/status': 'failed', 'toolplane/code': o.code, ...effectKeyMeta(o.effectKey) },
      };
    case 'waiting':
      return {
        isError: true,
        content: text(waitingText(sessionId, o)),
        _meta: {
          'toolplane/status': 'waiting',
          'toolplane/effectKey': o.effectKey,
          ...(o.question ? { [CONFIRMATION_META]: o.question } : {}),
        },
      };
  }
}

/** Where a waiting result names the value its principal is asked to confirm. */
export const CONFIRMATION_META = 'toolplane/confirmation';

function effectKeyMeta(effectKey: string | undefined): Record<string, string> {
  return effectKey ? { 'toolplane/effectKey': effectKey } : {};
}

/** Arguments that break the tool's input schema: a tool execution error a model can correct itself from. */
export function invalidArgumentsResult(toolName: string, problems: ArgumentProblem[]): CallToolResult {
  const listed = problems.map((p) => `${p.pointer || '(the arguments)'} ${p.message}`).join('; ');
  return {
    isError: true,
    content: text(`invalid arguments for ${toolName}: ${listed}. Nothing was started.`),
    _meta: { 'toolplane/status': 'invalid_arguments' },
  };
}
