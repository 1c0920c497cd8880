// The model activity's side of the run's stream: tokens as the model writes them, coalesced into
// one `tokens` event per interval, signed with the worker's key and sent to the run through the
// stream's append update (common/stream-protocol.ts), with the activity's own Temporal client. A view
// only: the activity's result is the turn's record, and a retried attempt publishes from index 0 again
// (readers skip the indices they have).
import { randomUUID } from 'node:crypto';
import { Context } from '@temporalio/activity';
import { WorkflowNotFoundError, WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import { type TokensEvent } from '../../common/run-events';
import { STREAM_APPEND_UPDATE, type StreamPublish } from '../../common/stream-protocol';
import type { RunIds, TicketIssuer } from '../identity/tickets';

/** How long tokens wait to be sent together: one signal per interval at most, whatever the model's pace. */
export const TOKEN_BATCH_MS = 200;

/** How often a batch whose signal failed is sent again (the same sequence number: the run applies it once). */
const SEND_TRIES = 5;

export class TokenPublisher {
  private readonly run: WorkflowHandle | undefined;
  private readonly ids: RunIds | undefined;
  private readonly attempt: number;
  private readonly log: Context['log'];
  /** One publisher per attempt: its batches are numbered from 1, and the run applies each number once. */
  private readonly publisher = randomUUID();
  private sequence = 0;
  private next = 0;
  private pending: string[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** The batches go out one after another, in order: a reader's token indices never go back. */
  private sending: Promise<void> = Promise.resolve();
  private stopped = false;

  private constructor(
    private readonly turn: string,
    private readonly signer: Pick<TicketIssuer, 'signStreamBatch'>,
    private readonly batchMs: number,
  ) {
    const ctx = Context.current();
    const run = ctx.info.workflowExecution;
    // The run that scheduled this attempt, by run id: a batch never lands in the run that continues it
    // (and its signature names that run).
    this.run = run ? ctx.client.workflow.getHandle(run.workflowId, run.runId) : undefined;
    this.ids = run ? { workflowId: run.workflowId, runId: run.runId } : undefined;
    this.attempt = ctx.info.attempt;
    this.log = ctx.log;
  }

  /** A publisher for the current model activity's turn, its batches signed by the worker's `signer`. */
  static forTurn(
    turn: string,
    signer: Pick<TicketIssuer, 'signStreamBatch'>,
    batchMs = TOKEN_BATCH_MS,
  ): TokenPublisher {
    return new TokenPublisher(turn, signer, batchMs);
  }

  /** One token (or text delta) as the model wrote it. */
  push(delta: string): void {
    if (delta.length === 0 || this.stopped) return;
    this.pending.push(delta);
    this.timer ??= setTimeout(() => this.send(), this.batchMs);
  }

  private send(): void {
    this.timer = undefined;
    if (this.pending.length === 0) return;
    const event: TokensEvent = {
      type: 'tokens',
      turn: this.turn,
      attempt: this.attempt,
      index: this.next,
      deltas: this.pending,
    };
    this.next += this.pending.length;
    this.pending = [];
    const unsigned = { publisher: this.publisher, sequence: ++this.sequence, tokens: [event] };
    const batch: StreamPublish = this.ids
      ? { ...unsigned, sig: this.signer.signStreamBatch(this.ids, unsigned) }
      : unsigned;
    this.sending = this.sending.then(() => this.deliver(batch));
  }

  /**
   * Sends one batch, again after a failure (under the same update id: Temporal answers a repeat with
   * the first outcome); gives up quietly, as a view may.
   */
  private async deliver(batch: StreamPublish): Promise<void> {
    const updateId = `${batch.publisher}/${batch.sequence}`;
    for (let tries = 1; this.run && !this.stopped; tries++) {
      try {
        await this.run.executeUpdate(STREAM_APPEND_UPDATE, { args: [batch], updateId });
        return;
      } catch (err) {
        // The run refused the batch (it hands over, or took it already) or has closed: nobody reads it.
        if (err instanceof WorkflowUpdateFailedError || err instanceof WorkflowNotFoundError || tries >= SEND_TRIES) {
          this.stopped = true;
          this.log.warn('the run stream takes no more tokens from this attempt', { error: String(err) });
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, this.batchMs * tries));
      }
    }
  }

  /** Sends what is left and waits until the run has it: the turn's result reaches the run after its tokens. */
  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.send();
    await this.sending;
  }

  /** Stops without waiting (the attempt failed): what is buffered goes if it can, nothing more is sent. */
  abandon(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.send();
    this.sending = this.sending.then(() => {
      this.stopped = true;
    });
  }
}
