// Path 3 of the AgentDojo harness (issue 44 item 3): the suite's tools reached through toolplane's MCP
// gateway by the MCP TypeScript SDK's own client. One gateway and one worker (with an identity, so
// bearers and the principal's confirmations are verified) per suite; one MCP session, one
// `mcpSession` run, per task run. The host declares the task's prompt as the principal's request
// (`Toolplane-Request`), the scripted ground-truth calls go as `tools/call`s each under its own
// `_meta.idempotencyKey`, and a call that waits on the principal to vouch for a value is answered out
// of band, with the principal's credential, by the careful user (careful-user.ts).
import { randomBytes, randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { NativeConnection } from '@temporalio/worker';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Manifest } from '../../catalog/manifest';
import { offerName } from '../../catalog/tool-id';
import { mcpSessionWorkflowId, type ConfirmationQuestion, type McpSessionInput } from '../../common/gateway-protocol';
import type { JournalEntry } from '../../common/journal';
import { createGateway } from '../../gateway/gateway';
import { encodeDeclaredRequest, REQUEST_HEADER } from '../../gateway/host-request';
import { CONFIRMATION_META } from '../../gateway/results';
import { generateIssuerKey, signCredential } from '../../identity/mint';
import { confirm, reject } from '../../inspect/decisions';
import type { McpSessionResult } from '../../workflows/mcp/session';
import { createWorker } from '../../worker';
import { carefulUserAnswer, type DojoPrincipal } from './careful-user';
import { DojoUnavailable, type DojoScript } from './python';
import { dojoToolId } from './tool-id';

/** The worker's audience for the principal's own credential (their confirmations). */
const WORKER_AUDIENCE = 'agentdojo-worker';
/** A call asks for at most this many values before the careful user stops answering. */
const MAX_QUESTIONS_PER_CALL = 8;

export interface GatewayPathOptions {
  client: Client;
  connection: NativeConnection;
  namespace: string;
  manifest: Manifest;
  /** The workflow bundle with toolplane's workflows (`mcpSession` among them). */
  bundle: string;
  /** The session's principal: the subject of its bearer and of its confirmations. */
  principal: string;
  /** Who answers the session's questions: the careful user, or nobody (every question a no). */
  answers?: DojoPrincipal;
  log: (line: string) => void;
}

/** One task run through the gateway: the session's journal, one entry per scripted call in order. */
export interface GatewayTaskRun {
  /**
   * Entry `i` is scripted call `i` (its `position` is `i`): the session run's entry for it, or, for a
   * call that never reached the run (arguments the gateway refused before starting anything, a
   * protocol error), one made from the MCP result. A call left waiting on a person is `refused`
   * with rule `waiting`.
   */
  journal: JournalEntry[];
  /** Questions the session put to its principal, and how many got a yes. */
  confirmations: { asked: number; confirmed: number };
  /** The session's run. */
  workflowId: string;
}

export interface GatewayPath {
  /** `requested`: the tools the host names in the request it declares (absent: the prompt alone). */
  run(script: DojoScript, requested?: string[]): Promise<GatewayTaskRun>;
  close(): Promise<void>;
}

const statusOf = (r: CallToolResult) => r._meta?.['toolplane/status'] as string | undefined;
const effectKeyOf = (r: CallToolResult) => r._meta?.['toolplane/effectKey'] as string | undefined;
const textOf = (r: CallToolResult) =>
  r.content
    .map((c) => (c.type === 'text' ? c.text : ''))
    .join(' ')
    .trim();

function madeEntry(position: number, toolId: string, rule: string, reason: string): JournalEntry {
  return { position, toolId, decision: 'refused', rule, reason, attempts: 0, recovery: 'none' };
}

/** Starts the suite's worker and gateway; `run` plays one task's script as one MCP session. */
export async function startGatewayPath(o: GatewayPathOptions): Promise<GatewayPath> {
  const issuer = await generateIssuerKey('https://agentdojo.issuer.invalid', 'dojo-1');
  const identity = { issuers: [{ issuer: issuer.issuer, audience: WORKER_AUDIENCE, jwks: issuer.jwks }] };
  const ticketKey = randomBytes(32).toString('base64url');
  const taskQueue = `agentdojo-gateway-${randomUUID()}`;
  const worker = await createWorker({
    manifest: o.manifest,
    connection: o.connection,
    namespace: o.namespace,
    taskQueue,
    workflowBundle: { codePath: o.bundle },
    identity,
    ticketKey,
    insecureAssertedPrincipals: false,
    allowUngovernedToolRun: false,
    log: (l) => o.log(`[gateway worker] ${l}`),
  });
  const running = worker.run();
  const gateway = await createGateway({ client: o.client, taskQueue, manifest: o.manifest, identity, ticketKey });
  const toolIds = new Map(o.manifest.tools.map((t) => [offerName(t.id), t.id]));

  async function run(script: DojoScript, requested?: string[]): Promise<GatewayTaskRun> {
    const bearer = await signCredential(issuer, {
      audience: gateway.resource,
      subject: o.principal,
      expiresIn: '1h',
    });
    const transport = new StreamableHTTPClientTransport(new URL(gateway.url), {
      requestInit: {
        headers: {
          Authorization: `Bearer ${bearer}`,
          [REQUEST_HEADER]: encodeDeclaredRequest(
            requested ? { request: script.prompt, tools: requested } : script.prompt,
          ),
        },
      },
    });
    const mcp = new McpClient({ name: 'agentdojo-host', version: '1.0.0' });
    await mcp.connect(transport);
    const sessionId = transport.sessionId;
    if (!sessionId) {
      await mcp.close();
      throw new DojoUnavailable('gateway', 'initialize answered no Mcp-Session-Id');
    }
    const workflowId = mcpSessionWorkflowId(sessionId);
    const userCalls = script.calls.slice(0, script.userCalls);
    const results: ({ result: CallToolResult } | { error: string })[] = [];
    const confirmations = { asked: 0, confirmed: 0 };
    try {
      for (const [i, c] of script.calls.entries()) {
        const params = { name: `dojo__${c.function}`, arguments: c.args, _meta: { idempotencyKey: `dojo-${i}` } };
        try {
          let result = (await mcp.callTool(params)) as CallToolResult;
          for (let asked = 0; statusOf(result) === 'waiting' && asked < MAX_QUESTIONS_PER_CALL; asked++) {
            const question = result._meta?.[CONFIRMATION_META] as ConfirmationQuestion | undefined;
            const effectKey = effectKeyOf(result);
            if (!question || !effectKey) break; // an approval: the principal may not approve their own call
            const credential = await signCredential(issuer, { audience: WORKER_AUDIENCE, subject: o.principal });
            confirmations.asked++;
            // An action's question names the tool; the call it asks about is this one, with these arguments.
            const answer =
              o.answers === 'careful' ? carefulUserAnswer({ ...question, args: c.args }, userCalls) : 'reject';
            o.log(`[gateway] call ${i} ${c.function}: ${question.pointer} = ${String(question.value)}? ${answer}`);
            if (answer === 'confirm') {
              await confirm(o.client, workflowId, effectKey, question.value, { credential });
              confirmations.confirmed++;
            } else
              await reject(o.client, workflowId, effectKey, {
                credential,
                reason: "not a value of the user's own task",
              });
            result = (await mcp.callTool(params)) as CallToolResult;
          }
          results.push({ result });
        } catch (err) {
          results.push({ error: err instanceof Error ? err.message : String(err) });
        }
      }
    } finally {
      await transport.terminateSession().catch(() => undefined);
      await mcp.close();
    }
    const reached = results.some((r) => 'result' in r && statusOf(r.result) !== 'invalid_arguments');
    const session = reached
      ? await o.client.workflow.getHandle<(i: McpSessionInput) => Promise<McpSessionResult>>(workflowId).result()
      : { journal: [] };
    return { journal: aligned(script, results, session.journal), confirmations, workflowId };
  }

  /** The session's entries matched to the scripted calls, in order; one made from the result where none is. */
  function aligned(
    script: DojoScript,
    results: ({ result: CallToolResult } | { error: string })[],
    journal: JournalEntry[],
  ): JournalEntry[] {
    const entries = [...journal].sort((a, b) => a.position - b.position);
    let next = 0;
    return script.calls.map((c, i) => {
      const toolId = toolIds.get(`dojo__${c.function}`) ?? dojoToolId(c.function);
      const r = results[i];
      if (!r || 'error' in r) return madeEntry(i, toolId, 'protocol_error', r?.error ?? 'not sent');
      const status = statusOf(r.result);
      if (status === 'invalid_arguments') return madeEntry(i, toolId, 'input_schema', textOf(r.result));
      const key = effectKeyOf(r.result);
      const found = (key && entries.find((e) => e.effectKey === key)) || entries[next];
      if (found) next = entries.indexOf(found) + 1;
      if (status === 'waiting')
        return {
          ...(found ?? madeEntry(i, toolId, 'waiting', '')),
          position: i,
          decision: 'refused',
          rule: 'waiting',
          reason: textOf(r.result),
        };
      if (!found) return madeEntry(i, toolId, status ?? 'unknown', textOf(r.result));
      return { ...found, position: i };
    });
  }

  return {
    run,
    close: async () => {
      await gateway.close();
      worker.shutdown();
      await running;
    },
  };
}
