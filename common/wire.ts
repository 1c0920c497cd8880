// Workflow-safe, owned by neither side: the types that cross the workflow/activity boundary
// (what a workflow schedules, what an activity answers) and the activities' interfaces, keyed by
// the names in `names.ts` (the budget's in `budget-wire.ts`). Activities implement these; workflows proxy them.
import type { ModelRequest, ResolvedModel, RunAuthority, RunRequest } from '../catalog/authority';
import type { ModelTurnInput, ModelTurnResult } from './model-turn';
import type { RunCaps } from '../catalog/caps';
import type { Sensitivity } from '../catalog/manifest';
import type { SentToolDecl } from '../catalog/tool-decl-defaults';
import type { Policy } from '../catalog/policy';
import type { LedgerDecision } from './ledger-ref';
import { ActivityName } from './names';
import type { StoredOutput } from './stored-output';
import type { RunIdentity, RunTicket, TicketCarry } from './ticket';
import type { SessionPass } from './gateway-protocol';
import type { McpCallProof } from './session-proof';

export {
  scriptedCallId,
  type ChatMessage,
  type FinishReason,
  type ModelToolCall,
  type ModelTurnAnswer,
  type ModelTurnInput,
  type ModelTurnResult,
  type RecordedToolCall,
  type ScriptTurn,
  type ToolResults,
} from './model-turn';

/** Written to history per call (the effect key is the activity id); `ticket`/`digest`: the worker reads them from the run's opening. */
export interface PerformRequest {
  toolId: string;
  args: Record<string, unknown>;
  /** Absent: the principal of the run's first opening, whose ticket must hold the tool's permit (run-opening.ts). */
  principal?: string;
  /** The MAC of the run's ticket for this tool (older requests): the worker checks it against the scheduling run's ids. */
  ticket?: string;
  requiresLedger?: boolean;
  /** How the run decided the call (absent: no gate saw it); signed into `produced_by`. Sent for `requires_ledger` tools. */
  decision?: Exclude<LedgerDecision, 'ungoverned'>;
  /** Every argument was trusted when the run decided; signed into `produced_by`. Sent for `requires_ledger` tools. */
  trustedArgs?: boolean;
  /** A failure that reached the provider may be tried again (`retries_landed`). */
  retriesLanded?: boolean;
  /** What the run may still spend once this call is charged (`ctx.budget`). */
  budget?: RemainingBudget;
  /** Omitted when the run allows every granted tool. */
  policy?: Policy;
  /** The model's tool-call id this execution answers (telemetry only). */
  modelCallId?: string;
  /** Set on a resend: which recovery path sent it again. */
  recoveryPath?: string;
  /** The run's declaration of the tool, as a short digest (older requests); a worker that declares it otherwise refuses. */
  digest?: string;
  /** The extension-runtime lease the run granted this call (extension tools only). */
  lease?: string;
  /** In an MCP session: the gateway's MAC of the call (`{ key, mac }`), checked before the tool runs. */
  mcpCall?: McpCallProof;
}

export interface PerformResult {
  /** Absent when the output is stored outside history (`stored`). */
  output?: unknown;
  /** Made only here, for an output above the threshold; a tool's output cannot imitate it. */
  stored?: StoredOutput;
  /** What the tool reported while it ran (an extension starting, ...); omitted when nothing. */
  events?: ToolEvent[];
  /** What the tool cited (recalled facts), verified here; omitted when nothing. */
  origins?: CitedOrigin[];
}

/** Values a tool's output repeats from an earlier call, labelled as that call's verified origin. */
export interface CitedOrigin {
  /** The cited arguments' strings and numbers. */
  values: (string | number)[];
  /** The reference verified and the origin's arguments were all trusted. */
  trusted: boolean;
  /** `workflowId/runId/effectKey` of a verified origin. */
  origin?: string;
  /** Whose run wrote it, as the origin's signed reference says. */
  principal?: string;
  /** Why the values do not count as trusted. */
  reason?: string;
}

export interface ReconcileRequest {
  toolId: string;
  principal?: string;
  ticket?: string;
  lease?: string;
}

export interface CarriedRequest {
  toolId: string;
  args: Record<string, unknown>;
  principal: string;
  ticket: string;
  /** The run's declaration of the tool, as a short digest; a worker that declares it otherwise refuses. */
  digest?: string;
}

export interface ToolEvent {
  kind: string;
  detail?: Record<string, unknown>;
}

/** The label and size of what a call carries. */
export interface CarriedContent {
  bytes: number;
  /** Where it came from (e.g. `file:f_2`); the tool's own identity if not given. */
  sources?: string[];
  sensitivity: Sensitivity;
}

export type Reconciliation =
  { status: 'landed'; output: unknown } | { status: 'not_landed' } | { status: 'unknown'; reason?: string };

/** What a run may still spend once a call is charged: only the limits the run has. Handed to the tool as `ctx.budget`. */
export interface RemainingBudget {
  /** Tool calls the run may still make after this one. */
  toolCalls?: number;
  /** Micro-units of cost left after this call. */
  costMicros?: number;
  /** Bytes each of this call's destinations may still receive in this run, after this call. */
  egressBytes?: Record<string, number>;
  /** The run's deadline, epoch milliseconds (the activity's own is `ctx.deadline`). */
  deadline?: number;
}

/**
 * A run authorized without a credential of its own: it shows the ticket of the run it continues
 * (the same workflow id) or of the parent delegating to it, with that run's ids as Temporal gave
 * them to this workflow.
 */
export interface CarriedAuthority {
  from: 'continued' | 'parent';
  workflowId: string;
  runId: string;
  carry: TicketCarry;
}

export interface AuthorizeRequest extends Omit<RunRequest, 'principal' | 'groups'> {
  /** Who the run asks to act as: with a credential, its subject must be this (or it may be left out). */
  principal?: string;
  /** The run's credential (a JWT); required by a worker that verifies identities. */
  credential?: string;
  /**
   * The digest of the run's input as the run's code computed it (`runInputDigest`, common/input-binding.ts):
   * a credential bound to another input is refused. Absent: the run binds only its workflow type.
   */
  inputDigest?: string;
  /** Instead of a credential: the ticket of the run this one continues, or of its delegating parent. */
  carried?: CarriedAuthority;
  /** Instead of a credential: the MCP gateway's pass for the session this run is (spent once). */
  pass?: SessionPass;
  /** The model endpoint an agent run names; refused here, before any request, when undeclared. */
  model?: ModelRequest;
  /** A run without the data-flow gate (`toolRun`) asks to be served; only a worker configured for it agrees. */
  ungoverned?: boolean;
}

type Restored = 'principal' | 'manifestDigest' | 'grants' | 'capabilities' | 'withheld';
/**
 * The run's authority, with the declarations of exactly the tools it holds: a run reaches only
 * what this worker declares, and its history does not grow with the size of the manifest. Recorded
 * once per run (the `authorizeRun` marker), so it carries nothing the run can restore itself: a
 * declaration's fields at their default, the granted tools' identities twice, empty lists. The run
 * reads it through `readAuthority`, which restores them; answers recorded whole read the same.
 */
export interface AuthorizeResult extends Omit<RunAuthority, Restored> {
  /** Absent: `identity.principal`. */
  principal?: string;
  /** Absent: the digest the run's request pinned (`AuthorizeRequest.manifestDigest`). */
  manifestDigest?: string;
  /** Absent: exactly the identities of `tools`. */
  grants?: string[];
  /** Absent: none. */
  capabilities?: string[];
  /** Absent: nothing withheld. */
  withheld?: RunAuthority['withheld'];
  /** The granted tools' declarations, as the worker's manifest has them (fields at their default left out). */
  tools: SentToolDecl[];
  /**
   * Tools the manifest declares that the run was not granted, by identity: an ungranted one is
   * refused as such, not as unknown. (Answers recorded before format v1's first revision list every
   * declared tool, the granted ones too.)
   */
  declared: string[];
  /** The endpoint the run's model turns go to, as the worker declares it (a key variable's name, never its value). */
  model?: ResolvedModel;
  /** Who the run acts for, as the worker established it; `groups` absent when there are none. */
  identity: Omit<RunIdentity, 'groups'> & { groups?: string[] };
  /** The worker's ticket: each call presents its permit's MAC. Its `identity` is absent: it is `identity`. */
  ticket: Omit<RunTicket, 'identity'> & { identity?: RunIdentity };
  /**
   * The worker verifies who decides this run's waiting calls (it has an identity): every decision
   * carries the approver's credential and goes through `authorizeDecision`. Absent: a decision's
   * `by` is taken as given (a worker without identity, whose manifest declares no approvers).
   */
  verifiesDecisions?: true;
  /**
   * The public key of the worker's signatures (Ed25519, base64url): the run's stream takes a token
   * batch only signed with it (common/stream-protocol.ts). Absent in answers recorded before signed
   * tokens: such a run takes no tokens from a newer worker.
   */
  streamKey?: string;
  /**
   * The worker's caps on this run (its manifest's `limits`, tightened for the principal); absent when
   * it caps nothing. The run's budget is the tighter of these and the run's own limits.
   */
  caps?: RunCaps;
}

/** What a run asks the worker before it takes a person's decision on one of its waiting calls. */
export interface DecisionRequest {
  /** The approver's credential (a JWT) as the decision carries it. */
  credential?: string;
  /** The name the decision gives; refused when it is not the verified subject. */
  by?: string;
  /** `approve`, `deny`, or an in-doubt answer (`retry`, `landed`, `abort`). */
  decision: string;
  /** The waiting call, as the run (not the decision) knows it. */
  toolId: string;
  /** The waiting call's effect key: the one call the credential is spent on. */
  effectKey: string;
  /** The gate's rule an approval was asked under. */
  rule?: string;
  /** The principal the run acts for (an approver who is this principal decides only where declared `own_run`). */
  runPrincipal: string;
  /** A confirmation's answer: the value it vouches for (as the question asked it). */
  value?: string | number;
  /** A confirmation's answer relayed by the MCP gateway from the session's principal: its MAC. */
  relay?: string;
}

/** The worker's answer: the decision stands, made by this verified subject. */
export interface DecisionAuthority {
  by: string;
  issuer: string;
}

export interface DecisionActivities {
  [ActivityName.AuthorizeDecision](req: DecisionRequest): Promise<DecisionAuthority>;
}

export interface AuthorizeActivities {
  [ActivityName.Authorize](req: AuthorizeRequest): Promise<AuthorizeResult>;
}

export interface ToolActivities {
  [ActivityName.Perform](req: PerformRequest): Promise<PerformResult>;
  [ActivityName.Reconcile](req: ReconcileRequest): Promise<Reconciliation>;
}

export interface CarriedActivities {
  [ActivityName.Carried](req: CarriedRequest): Promise<CarriedContent>;
}

export interface ModelActivities {
  [ActivityName.ModelTurn](turn: ModelTurnInput): Promise<ModelTurnResult>;
}
