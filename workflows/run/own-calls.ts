// Workflow-safe: a workflow's own calls, governed by default. The manifest's rules judge each one over
// the labels of what the run's calls returned (workflows/gate/run-governance.ts); its output enters
// them. The labels and usage carry over to the run that continues this one.
import type { Sensitivity } from '../../catalog/manifest';
import type { JournalEntry } from '../../common/journal';
import type { CitedOrigin } from '../../common/wire';
import { runCall, type CallHost, type CallOptions } from '../call/pipeline';
import { replyingWith, replyOf } from '../call/options';
import { patched } from '@temporalio/workflow';
import { Patch } from '../../common/names';
import type { Governance } from '../gate/own-call';
import { RunGovernance, type RunGovernanceState } from '../gate/run-governance';
import type { RunScope } from '../step-ctx';

export class OwnCalls {
  /** What the principal gave the run (`open({ given })`), labelled once the workflow makes its first call. */
  given?: { value: unknown; sensitivity?: Sensitivity };
  /** The manifest's rules on the workflow's own calls: the run's labels and usage. */
  private governance?: RunGovernance;
  private carried?: RunGovernanceState;

  constructor(private readonly scope: RunScope) {}

  private runGovernance(): RunGovernance {
    if (this.governance) return this.governance;
    const caps = this.scope.caps;
    this.governance = this.carried
      ? RunGovernance.restore(this.carried, caps)
      : RunGovernance.start({
          given: this.given?.value,
          sensitivity: this.given?.sensitivity,
          caps,
          startedAt: Date.now(),
        });
    return this.governance;
  }

  /** The labels and usage so far, once the workflow made a governed call (or carried them over). */
  state(): RunGovernanceState | undefined {
    return this.governance ? this.governance.state() : this.carried;
  }

  /** Picks up the labels and usage of the run this one continues. */
  resume(state: RunGovernanceState | undefined): void {
    if (state) this.carried = state;
  }

  /**
   * A workflow's own call, judged by the manifest's rules; its output enters the run's labels as the
   * call lands, before the workflow sees it. Nothing here waits: the pipeline's promise is the call's.
   */
  call(host: CallHost, entry: JournalEntry, args: unknown, options: CallOptions): Promise<unknown> {
    let governance: RunGovernance;
    let judged: Governance;
    let callTrusted = false;
    let origins: CitedOrigin[] = [];
    try {
      governance = this.runGovernance();
      judged = governance.governance(this.scope, {
        ...(options.acceptUntrusted !== undefined ? { acceptUntrusted: options.acceptUntrusted } : {}),
        onAllowed: (trusted) => (callTrusted = trusted),
        phrasesJudged: () => patched(Patch.OwnPhrasesJudged),
        ...(options.fromModel ? { fromModel: true } : {}),
      });
    } catch (err) {
      return Promise.reject(err);
    }
    const heard: CallOptions = {
      ...options,
      onOrigins: (o) => {
        origins = o;
        options.onOrigins?.(o);
      },
    };
    // A reply the caller gave (CallReply) goes with the options it was given with.
    const reply = replyOf(options);
    if (reply) replyingWith(heard, reply);
    return runCall(host, entry, args, heard, { own: judged }, (output) =>
      governance.produced({
        toolId: entry.toolId,
        output,
        callTrusted,
        origins,
        sensitivity: this.scope.catalog.declared(entry.toolId)!.decl.sensitivity.output,
        places: this.scope.catalog.placesOf(entry.toolId),
        args,
      }),
    );
  }
}
