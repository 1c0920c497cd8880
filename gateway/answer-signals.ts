// In-process wake-ups for a 2025-11-25 call that asked its principal in-band (`elicitation/create`): the
// answer arrives in another POST, and once this process relayed it, the waiting call asks its run for the
// outcome. An answer relayed by another gateway process wakes nothing here: the call waits out its bound
// and answers `waiting`, and the client's repeat under the same key gets the outcome.
import { EventEmitter } from 'node:events';

export class AnswerSignals {
  private readonly events = new EventEmitter();

  constructor() {
    // One listener per call waiting on its principal, of any number of sessions.
    this.events.setMaxListeners(0);
  }

  /** Resolves once `settle` is called for the question, after `ms`, or when `signal` aborts. */
  wait(sessionId: string, effectKey: string, ms: number, signal?: AbortSignal): Promise<void> {
    const event = `${sessionId}\u0000${effectKey}`;
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.events.off(event, done);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.events.on(event, done);
      signal?.addEventListener('abort', done);
    });
  }

  /** The question under `effectKey` in the session was answered (or will not be): its waiting call goes on. */
  settle(sessionId: string, effectKey: string): void {
    this.events.emit(`${sessionId}\u0000${effectKey}`);
  }
}
