// The model activity's side of the run's stream: tokens as the model writes them, coalesced into
// one `tokens` event per interval and sent to the run through the stream's publish signal. A view
// only: the activity's result is the turn's record, and a retried attempt publishes from index 0
// again (readers skip the indices they have).
import { Context } from '@temporalio/activity';
import { WorkflowStreamClient } from '@temporalio/workflow-streams/client';
import { RunTopic, type TokensEvent } from '../../common/run-events';

/** How long tokens wait to be sent together: one signal per interval at most, whatever the model's pace. */
export const TOKEN_BATCH_MS = 200;

export class TokenPublisher {
  private readonly client: WorkflowStreamClient;
  private readonly attempt: number;
  private next = 0;
  private pending: string[] = [];
  private timer: NodeJS.Timeout | undefined;

  private constructor(
    private readonly turn: string,
    private readonly batchMs: number,
  ) {
    // Each batch is flushed when it is made (forceFlush); the library's timer, as often, only backs it up.
    this.client = WorkflowStreamClient.fromWithinActivity({ batchInterval: batchMs });
    this.attempt = Context.current().info.attempt;
  }

  /** A publisher for the current model activity's turn. */
  static forTurn(turn: string, batchMs = TOKEN_BATCH_MS): TokenPublisher {
    return new TokenPublisher(turn, batchMs);
  }

  /** One token (or text delta) as the model wrote it. */
  push(delta: string): void {
    if (delta.length === 0) return;
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
    this.client.topic<TokensEvent>(RunTopic.Tokens).publish(event, { forceFlush: true });
  }

  /** Sends what is left and waits until the run has it: the turn's result reaches the run after its tokens. */
  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.send();
    await this.client[Symbol.asyncDispose]();
  }

  /** Stops without waiting (the attempt failed): what is buffered goes if it can, nothing more is sent. */
  abandon(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.send();
    this.client[Symbol.asyncDispose]().catch(() => undefined);
  }
}
