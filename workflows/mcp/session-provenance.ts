// Workflow-safe: what an MCP session's client has read. Every completed call's output enters the
// session's provenance as the tool's untrusted data (governedAgentCall produces it). The client is a
// model that read everything the session returned: a call is judged over a snapshot taken when it
// arrives, and until a first result entered the session, what the client sends is the principal's
// own words (`user://prompt`, as agentRun's prompt).
import { canonicalJson, sha256Hex } from '../../catalog/digest';
import { Provenance, USER_PROMPT, type ProvenanceState, type ProvenanceView } from '../gate/provenance';

export class SessionProvenance {
  readonly provenance: Provenance;
  /** A result has entered the session: what the client sends from now on is of unknown origin. */
  resultSeen: boolean;
  /** Digests of the host's declarations produced in this run (a continued run produces a repeat again: harmless). */
  private readonly declared = new Set<string>();

  constructor(carried?: { provenance: ProvenanceState; resultSeen: boolean }) {
    this.provenance = carried ? Provenance.restore(carried.provenance) : new Provenance();
    this.resultSeen = carried?.resultSeen ?? false;
  }

  /** What the client had read when it sent `args`: the view the gate judges the call by. */
  seenBy(args: unknown): ProvenanceView {
    if (!this.resultSeen)
      this.provenance.produce(args, { source: USER_PROMPT, trusted: true, callTrusted: true, sensitivity: 'internal' });
    return this.provenance.snapshot();
  }

  /**
   * The host declared the principal's request (`Toolplane-Request`): its values are the principal's own
   * words (`user://prompt`, trusted) from now on, whatever entered the session before. Each distinct
   * declaration is produced once per run.
   */
  declare(given: unknown): void {
    const digest = sha256Hex(canonicalJson(given ?? null));
    if (this.declared.has(digest)) return;
    this.declared.add(digest);
    this.provenance.produce(given, { source: USER_PROMPT, trusted: true, callTrusted: true, sensitivity: 'internal' });
  }

  /** A call completed: its output (already produced into the provenance) is now in the client's context. */
  returned(): void {
    this.resultSeen = true;
  }

  state(): { provenance: ProvenanceState; resultSeen: boolean } {
    return { provenance: this.provenance.state(), resultSeen: this.resultSeen };
  }
}
