// Workflow-safe: the run's stream (Temporal workflow streams), a view for clients. The workflow
// publishes its effects here as they happen; the model activity publishes tokens through the
// stream's signal. Nothing in the run reads the stream back: it is never an input to a decision.
import { allHandlersFinished, condition, defaultPayloadConverter, defineQuery, setHandler } from '@temporalio/workflow';
import {
  decodePayloadWire,
  WorkflowStream,
  workflowStreamPublishSignal,
  type PublishInput,
  type WorkflowStreamState,
} from '@temporalio/workflow-streams/workflow';
import { RunTopic, STREAM_TAIL_QUERY, type EffectEvent, type StreamTail } from '../common/run-events';

export type { WorkflowStreamState } from '@temporalio/workflow-streams/workflow';

const streamTail = defineQuery<StreamTail, [number]>(STREAM_TAIL_QUERY);

export class RunStream {
  readonly stream: WorkflowStream;

  /** Registers the stream's handlers; a run that continues a chain passes the state its predecessor handed over. */
  constructor(prior?: WorkflowStreamState) {
    this.stream = new WorkflowStream(prior);
    // The effects topic is the workflow's own: what a signal publishes there (anyone who may signal the
    // run can) is dropped, so an effect event a client reads was written by the run. Other topics,
    // the model's tokens among them, take signals as the library does.
    // (The library's handler is private; this pins @temporalio/workflow-streams 1.23's shape.)
    const inner = this.stream as unknown as { onPublish(input: PublishInput): void; log: { topic: string }[] };
    // Signals sent before the run registered its stream went to the library's handler as it was set.
    const carried = prior?.log.length ?? 0;
    inner.log = [
      ...inner.log.slice(0, carried),
      ...inner.log.slice(carried).filter((i) => i.topic !== RunTopic.Effects),
    ];
    const accept = inner.onPublish.bind(this.stream);
    setHandler(workflowStreamPublishSignal, (input: PublishInput) =>
      accept({ ...input, items: input.items.filter((item) => item.topic !== RunTopic.Effects) }),
    );
    // A client that polled a run until it closed reads what it missed here (a query answers a closed run).
    setHandler(streamTail, (from) => {
      const state = this.stream.getState();
      const start = Math.max(from, state.base_offset);
      return {
        items: state.log.slice(start - state.base_offset).map((item, i) => ({
          offset: start + i,
          topic: item.topic,
          data: defaultPayloadConverter.fromPayload(decodePayloadWire(item.data)),
        })),
        end: state.base_offset + state.log.length,
      };
    });
  }

  /** Publishes one of the run's effects. */
  publish(event: EffectEvent): void {
    this.stream.topic<EffectEvent>(RunTopic.Effects).publish(event);
  }

  /**
   * What the run that continues this one (continue-as-new) takes over: offsets go on from where this
   * run's log ends, and publishers' sequence numbers still deduplicate. The log itself stays in this
   * run (its history holds it): a client reads its tail by query, then follows the chain.
   */
  async handOver(): Promise<WorkflowStreamState> {
    this.stream.detachPollers();
    await condition(allHandlersFinished);
    const state = this.stream.getState();
    return { ...state, log: [], base_offset: state.base_offset + state.log.length };
  }
}
