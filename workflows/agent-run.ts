// Workflow-safe: an agent run. Model turns and tool calls alternate; every call is governed.
import { ApplicationFailure, executeChild, proxyActivities, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import { manifestDigest } from '../catalog/digest';
import type { Manifest, Sensitivity } from '../catalog/manifest';
import { ALLOW_ALL, type Policy } from '../catalog/policy';
import { ToolCatalog, type OfferedTool } from '../catalog/tool-catalog';
import { laneOf, runInLanes } from './lanes';
import type { ToolRunResult } from './tool-run';
import type { ModelActivities } from '../activities/model';
import type { ChatMessage, ModelChoice } from '../activities/model/types';
import { governanceGate } from './governance';
import type { JournalEntry } from './journal';
import { Budget, type Limits, type Usage } from './limits';
import { Provenance, USER_PROMPT } from './provenance';
import { TOOLS_CALLED } from './search-attributes';
import { StepCtx } from './step-ctx';
import { StepError } from './step-error';

export interface AgentRunInput {
  prompt: string;
  principal: string;
  grants: string[];
  manifest: Manifest;
  /** The digest the caller pinned; a different manifest is refused. */
  manifestDigest: string;
  model: ModelChoice;
  policy?: Policy;
  limits?: Limits;
  systemPrompt?: string;
  /** How sensitive the prompt itself is (default internal). */
  promptSensitivity?: Sensitivity;
  delegationDepth?: number;
  /** Capabilities granted to the run, such as `extension-runtime`. */
  capabilities?: string[];
}

export interface AgentRunResult {
  status: 'completed' | 'limit';
  answer?: string;
  /** The limit that ended the run. */
  rule?: string;
  reason?: string;
  journal: JournalEntry[];
  usage: Usage;
}

const { modelTurn } = proxyActivities<ModelActivities>({
  startToCloseTimeout: '2m',
  retry: { maximumAttempts: 3, initialInterval: '1s', nonRetryableErrorTypes: ['ModelAuth', 'ModelRequestInvalid'] },
});

export async function agentRun(input: AgentRunInput): Promise<AgentRunResult> {
  const digest = manifestDigest(input.manifest);
  if (digest !== input.manifestDigest) {
    throw ApplicationFailure.nonRetryable(`the manifest's digest is ${digest}, not the pinned ${input.manifestDigest}`, 'ManifestDigestMismatch');
  }
  const policy = input.policy ?? ALLOW_ALL;
  const catalog = ToolCatalog.fromManifest(input.manifest, input.grants);
  const offered = catalog.offered(policy);
  const step = new StepCtx({ catalog, principal: input.principal, grants: input.grants, policy, capabilities: input.capabilities });
  const budget = new Budget(input.limits ?? {}, Date.now(), input.delegationDepth ?? 0);
  const provenance = new Provenance();
  let seen = provenance.snapshot(); // what the model had read when it wrote the current turn's calls
  provenance.produce(input.prompt, { source: USER_PROMPT, trusted: true, callTrusted: true, sensitivity: input.promptSensitivity ?? 'internal' });

  const messages: ChatMessage[] = [...(input.systemPrompt ? [{ role: 'system' as const, content: input.systemPrompt }] : []), { role: 'user', content: input.prompt }];
  const called = new Set<string>();
  const finish = (r: Omit<AgentRunResult, 'journal' | 'usage'>): AgentRunResult => {
    step.releaseLeases();
    if (called.size > 0) upsertSearchAttributes([{ key: TOOLS_CALLED, value: [...called] }]);
    return { ...r, journal: step.ordered(), usage: budget.usage };
  };

  const delegate = async (toolId: string, args: Record<string, unknown>, position: number): Promise<unknown> => {
    // A subagent: its own workflow and lane, one delegation level deeper; the gates already ran here.
    const child: ToolRunResult = await executeChild('toolRun', {
      workflowId: `${workflowInfo().workflowId}/delegated-${position}`,
      args: [{ manifest: input.manifest, grants: [toolId], principal: input.principal, calls: [{ toolId, args }], capabilities: input.capabilities, delegationDepth: (input.delegationDepth ?? 0) + 1 }],
    });
    const out = child.outputs[0] as { error?: { message: string } } | undefined;
    if (child.status !== 'completed') throw new Error(out?.error?.message ?? 'the delegated call failed');
    return out;
  };

  const governedCall = async (c: { toolId: string; args: unknown; offer: OfferedTool | undefined; position: number; callId: string; independent: boolean }): Promise<string> => {
    let callTrusted = false;
    try {
      const output = await step.callTool(c.toolId, c.args, {
        position: c.position,
        modelCallId: c.callId,
        answering: c.offer,
        gate: governanceGate({ principal: input.principal, offer: c.offer, budget, provenance: seen, onAllowed: (t) => (callTrusted = t) }),
        ...(c.independent ? { delegate } : {}),
      });
      called.add(c.toolId);
      const decl = catalog.declared(c.toolId)!.decl;
      provenance.produce(output, { source: c.toolId, trusted: false, callTrusted, sensitivity: decl.sensitivity.output });
      return JSON.stringify(output);
    } catch (err) {
      if (!StepError.is(err)) throw err;
      return JSON.stringify({ error: err.code, rule: err.rule, reason: err.message });
    }
  };

  for (;;) {
    const turnLimit = budget.checkTurn(Date.now());
    if (!turnLimit.ok) return finish({ status: 'limit', rule: turnLimit.rule, reason: turnLimit.reason });
    const turn = await modelTurn({ model: input.model, messages, tools: offered });
    budget.chargeTurn(turn.usage);
    messages.push(turn.message);
    const calls = turn.message.toolCalls ?? [];
    if (calls.length === 0) return finish({ status: 'completed', answer: turn.message.content });

    // Positions follow the model's order; lanes decide what may run at the same time.
    const base = step.reserve(calls.length);
    seen = provenance.snapshot();
    const contents = await runInLanes(
      calls.map((c, i) => {
        const offer = offered.find((o) => o.name === c.name || o.toolId === c.name);
        const toolId = offer?.toolId ?? c.name;
        let args: unknown;
        try {
          args = JSON.parse(c.arguments);
        } catch {
          args = c.arguments;
        }
        const decl = catalog.declared(toolId)?.decl;
        const position = base + i;
        return { lane: laneOf(decl, args, position), run: () => governedCall({ toolId, args, offer, position, callId: c.id, independent: decl?.concurrency?.class === 'independent' }) };
      }),
    );
    calls.forEach((c, i) => messages.push({ role: 'tool', toolCallId: c.id, content: contents[i]! }));
    if (workflowInfo().continueAsNewSuggested) {
      // A run this long should be split; until then it ends cleanly rather than hitting the history limit.
      return finish({ status: 'limit', rule: 'limit:history', reason: 'the history is near its size limit' });
    }
  }
}
