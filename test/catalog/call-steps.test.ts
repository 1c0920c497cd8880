// The call pipeline's steps, each alone: prepare, gate, lease and recovery's decisions return what they
// decided without Temporal (workflows/call/pipeline.ts records them; the integration suites run the
// whole pipeline).
import path from 'node:path';
import { ActivityFailure, ApplicationFailure, RetryState, TimeoutFailure } from '@temporalio/common';
import { ToolCatalog } from '../../catalog/tool-catalog';
import { authorize, mayHold, resolveModel, RunRefused } from '../../catalog/authority';
import { ToolplaneError } from '../../catalog/errors';
import type { ToolCall } from '../../catalog/tool-call';
import { gatedArgs } from '../../workflows/call/gate';
import { takeLease } from '../../workflows/call/lease';
import { prepareCall } from '../../workflows/call/prepare';
import {
  afterRejection,
  afterRetryFailure,
  classify,
  DEFAULT_INFRASTRUCTURE_ATTEMPTS,
  finalFailure,
  recordSend,
  type Failure,
  type Progress,
} from '../../workflows/recovery-policy';
import { loadManifest } from '../../runtime/manifest-file';
import { exampleManifest } from '../support/env';

const manifest = exampleManifest();
const catalog = ToolCatalog.fromManifest(manifest, ['tool://crm/lookup_customer']);

describe('prepare', () => {
  it('refuses an ungranted tool, saying why; nothing is journalled by the step itself', () => {
    expect(prepareCall(catalog, 'tool://payments/refund', {})).toMatchObject({
      refused: { code: 'Unreachable', rule: 'unreachable', reason: expect.stringContaining('tool://payments/refund') },
    });
  });

  it('refuses a call that answers another offer', () => {
    const offer = catalog.offered({ allow: '*' })[0]!;
    expect(
      prepareCall(catalog, 'tool://tickets/read_ticket', {}, { ...offer, toolId: 'tool://crm/other' }),
    ).toMatchObject({ refused: { code: 'Unreachable', rule: 'answering' } });
  });

  it('refuses arguments that fail the schema', () => {
    expect(prepareCall(catalog, 'tool://crm/lookup_customer', { email: 7 })).toMatchObject({
      refused: { code: 'InvalidArguments', rule: 'schema' },
    });
  });
});

describe('gate', () => {
  const call = prepareCall(catalog, 'tool://crm/lookup_customer', { email: 'a@example.com' }) as ToolCall;

  it('sends the arguments an allowing verdict replaced, else the prepared ones', () => {
    expect(gatedArgs(call, { allow: true, args: { email: 'A@example.com' } })).toEqual({ email: 'A@example.com' });
    expect(gatedArgs(call, { allow: true })).toEqual({ email: 'a@example.com' });
    expect(gatedArgs(call, { allow: false, rule: 'taint:/email', reason: 'untrusted', askPerson: true })).toEqual({
      email: 'a@example.com',
    });
    expect(gatedArgs(call, undefined)).toEqual({ email: 'a@example.com' });
  });
});

describe('lease', () => {
  it('needs the capability the worker granted; names the extension and the position', () => {
    expect(takeLease('ext:alpha:add_entry', 3, [])).toMatchObject({ refused: { code: 'LeaseMissing', rule: 'lease' } });
    expect(takeLease('ext:alpha:add_entry', 3, ['extension-runtime'])).toBe('lease:alpha:3');
    expect(takeLease('tool://crm/lookup_customer', 3, [])).toBeUndefined();
  });
});

describe('recovery: what a failed send decides, as the tool declares it', () => {
  const flaky = loadManifest(path.resolve(__dirname, '..', 'fixtures', 'scenario-manifest.yaml')).manifest;
  const decl = (id: string) => flaky.tools.find((t) => t.id === id)!;
  const [read, charge] = [decl('tool://flaky/read'), decl('tool://flaky/charge')];
  const sent = (sends: number, more: Partial<Progress> = {}): Progress => ({
    sends,
    rejections: 0,
    reconciles: 0,
    resends: 0,
    recovery: 'none',
    ...more,
  });
  const app = (type: string) =>
    new ActivityFailure(
      'activity failed',
      'performTool',
      'ek-1',
      RetryState.NON_RETRYABLE_FAILURE,
      undefined,
      ApplicationFailure.nonRetryable('boom', type),
    );

  const timeout = (type: 'HEARTBEAT' | 'START_TO_CLOSE' | 'SCHEDULE_TO_START') =>
    new ActivityFailure(
      'x',
      'performTool',
      'ek-1',
      RetryState.TIMEOUT,
      undefined,
      new TimeoutFailure(undefined, undefined, type),
    );

  it("reads a send's failure by its type: rejected, landed, in doubt, a timeout", () => {
    expect(classify(app('ToolRejected'))).toEqual({ kind: 'rejected', message: 'boom', final: true });
    expect(classify(app('ToolFailedLanded'))).toEqual({ kind: 'failed_landed', message: 'boom', final: true });
    expect(classify(app('ToolInDoubt'))).toEqual({ kind: 'in_doubt', message: 'boom', final: true });
    const retryable = new ActivityFailure(
      'activity failed',
      'performTool',
      'ek-1',
      RetryState.MAXIMUM_ATTEMPTS_REACHED,
      undefined,
      ApplicationFailure.retryable('busy', 'ToolRejected'),
    );
    expect(classify(retryable)).toEqual({ kind: 'rejected', message: 'busy' });
    // No worker finished the send: the worker died or vanished, or the server lost the task.
    expect(classify(timeout('START_TO_CLOSE'))).toMatchObject({ kind: 'in_doubt', lost: true });
    expect(classify(timeout('HEARTBEAT'))).toMatchObject({ kind: 'in_doubt', lost: true });
    expect(classify(timeout('SCHEDULE_TO_START'))).not.toHaveProperty('lost');
    expect(classify(timeout('HEARTBEAT'))).toMatchObject({ message: expect.stringContaining('heartbeat') });
    expect(classify(app('SomethingElse')).kind).toBe('in_doubt');
  });

  it('ends the call on a failure that leaves nothing to recover, counting the sends made', () => {
    const changed = { kind: 'definition_changed', message: 'digest differs' } as const;
    expect(finalFailure(charge, charge.id, changed, sent(1))).toEqual({
      sends: 1,
      recovery: 'none',
      outcome: 'refused',
      refused: { code: 'Refused', rule: 'digest', reason: 'digest differs' },
    });
    const landed = { kind: 'failed_landed', message: 'card declined' } as const;
    expect(finalFailure(charge, charge.id, landed, sent(2, { recovery: 'reconciled_resent' }))).toEqual({
      sends: 2,
      recovery: 'reconciled_resent',
      outcome: 'failed',
      error: { code: 'Failed', message: 'tool://flaky/charge failed after reaching its provider: card declined' },
    });
    expect(finalFailure(charge, charge.id, { kind: 'output_unstored', message: 'm' }, sent(1))).toMatchObject({
      outcome: 'failed',
      error: { code: 'OutputLost' },
    });
    // In doubt on a tool that reconciles: not final, the state machine asks the provider.
    expect(finalFailure(charge, charge.id, { kind: 'in_doubt', message: 'm' }, sent(1))).toBeUndefined();
  });

  it('histories before Patch.SendsCounted: a retry tool is final once Temporal gave up: one send, retried by Temporal; in doubt only for a mutating tool', () => {
    expect(finalFailure(read, read.id, { kind: 'in_doubt', message: 'hung' }, sent(1))).toEqual({
      sends: 1,
      recovery: 'retried',
      outcome: 'in_doubt',
      error: { code: 'Failed', message: 'tool://flaky/read: retries exhausted: hung' },
    });
    expect(finalFailure(read, read.id, { kind: 'rejected', message: 'busy' }, sent(1))).toMatchObject({
      sends: 1,
      recovery: 'none',
      outcome: 'failed',
    });
    const mutating = { ...read, safety: 'mutating' as const };
    expect(finalFailure(mutating, read.id, { kind: 'in_doubt', message: 'hung' }, sent(1))).toMatchObject({
      error: { code: 'InDoubt' },
    });
  });

  describe('a retry tool, its sends counted by the workflow', () => {
    // tool://flaky/read: read_only, retry, maximum_attempts 3, initial_interval 100ms, maximum_interval 200ms.
    const failedSend = (n: Progress, failure: Failure) => {
      n.sends++;
      recordSend(failure, n);
      return afterRetryFailure(read, read.id, failure, n);
    };
    const busy: Failure = { kind: 'rejected', message: 'busy' };
    const lost: Failure = { kind: 'in_doubt', message: 'no answer', lost: true };

    it("the tool's own failures stop at maximum_attempts, with the declared backoff between them", () => {
      const n = sent(0);
      expect(failedSend(n, busy)).toBe(100);
      expect(failedSend(n, { kind: 'in_doubt', message: 'hung up' })).toBe(200);
      expect(failedSend(n, busy)).toEqual({
        sends: 3,
        recovery: 'retried',
        outcome: 'failed',
        error: { code: 'Failed', message: 'tool://flaky/read: retries exhausted: busy' },
      });
      expect(n).toMatchObject({ failed: 3 });
      expect(n).not.toHaveProperty('lost');
    });

    it('a send no worker finished is sent again at once and not counted as an attempt', () => {
      const n = sent(0);
      // More lost sends than the tool's three attempts: none of them is one.
      for (let i = 0; i < 5; i++) expect(failedSend(n, lost)).toBe(0);
      expect(failedSend(n, busy)).toBe(100);
      expect(failedSend(n, lost)).toBe(0);
      expect(failedSend(n, busy)).toBe(200);
      expect(n).toMatchObject({ sends: 8, failed: 2, lost: 6, recovery: 'retried' });
      // The tool's third failure is its last attempt, however many workers were lost.
      expect(failedSend(n, busy)).toMatchObject({ outcome: 'failed', error: { code: 'Failed' } });
    });

    it('lost sends end the call at retry.infrastructure_attempts (default 10, 0 unlimited), in doubt', () => {
      const n = sent(0);
      for (let i = 1; i < DEFAULT_INFRASTRUCTURE_ATTEMPTS; i++) expect(failedSend(n, lost)).toBe(0);
      expect(failedSend(n, lost)).toMatchObject({
        sends: DEFAULT_INFRASTRUCTURE_ATTEMPTS,
        outcome: 'in_doubt',
        error: { code: 'Failed', message: expect.stringContaining('no worker finished 10 sends') },
      });
      const mutating = { ...read, safety: 'mutating' as const, retry: { ...read.retry, infrastructure_attempts: 2 } };
      const m = sent(0);
      m.sends++;
      recordSend(lost, m);
      expect(afterRetryFailure(mutating, read.id, lost, m)).toBe(0);
      m.sends++;
      recordSend(lost, m);
      expect(afterRetryFailure(mutating, read.id, lost, m)).toMatchObject({ error: { code: 'InDoubt' } });
      const unlimited = { ...read, retry: { ...read.retry, infrastructure_attempts: 0 } };
      const u = sent(0);
      for (let i = 0; i < 100; i++) {
        u.sends++;
        recordSend(lost, u);
        expect(afterRetryFailure(unlimited, read.id, lost, u)).toBe(0);
      }
    });

    it('a failure the activity marked final ends the call at once', () => {
      const n = sent(0);
      expect(failedSend(n, { kind: 'unavailable', message: 'no such tool here' })).toMatchObject({
        outcome: 'failed',
        error: { code: 'Failed', message: 'no such tool here' },
      });
      expect(n).not.toHaveProperty('failed');
      expect(failedSend(sent(0), { kind: 'rejected', message: 'never', final: true })).toMatchObject({
        outcome: 'failed',
      });
      // A failure that reached the provider is tried again only where the tool declares retries_landed.
      expect(failedSend(sent(0), { kind: 'failed_landed', message: 'declined' })).toBe(100);
      expect(failedSend(sent(0), { kind: 'failed_landed', message: 'declined', final: true })).toMatchObject({
        outcome: 'failed',
        error: { message: expect.stringContaining('failed after reaching its provider') },
      });
    });
  });

  it('a rejection is sent again after a backoff, up to the declared attempts, then the call fails', () => {
    const n = sent(1);
    const rejected = { kind: 'rejected', message: 'busy' } as const;
    expect(afterRejection(charge, charge.id, rejected, n)).toBe(100);
    expect(n.recovery).toBe('retried');
    n.sends = 2;
    expect(afterRejection(charge, charge.id, rejected, n)).toBe(200);
    n.sends = 3;
    expect(afterRejection(charge, charge.id, rejected, n)).toEqual({
      sends: 3,
      recovery: 'retried',
      outcome: 'failed',
      error: { code: 'Failed', message: 'tool://flaky/charge: rejected 3 times: busy' },
    });
  });
});

describe('authority', () => {
  const principals = {
    'agent:desk': { tools: '*' as const, capabilities: ['extension-runtime'] },
    '*': { tools: ['tool://crm/lookup_customer'], capabilities: [] },
  };
  const declared = { tools: manifest.tools, principals };

  it('intersects grants and capabilities with what the principal may have', () => {
    const a = authorize(declared, 'sha256:x', {
      principal: 'user:1',
      grants: ['tool://crm/lookup_customer', 'tool://payments/refund'],
      capabilities: ['extension-runtime'],
    });
    expect(a).toMatchObject({
      grants: ['tool://crm/lookup_customer'],
      capabilities: [],
      withheld: { grants: ['tool://payments/refund'], capabilities: ['extension-runtime'] },
    });
    expect(mayHold(principals, { principal: 'agent:desk' }, 'extension-runtime')).toBe(true);
  });

  it('takes a principal named like an Object property for a name: granted what "*" grants, nothing more', () => {
    for (const principal of ['__proto__', 'constructor', 'toString', 'hasOwnProperty'])
      expect(authorize(declared, 'sha256:x', { principal, grants: ['tool://payments/refund'] })).toMatchObject({
        principal,
        grants: [],
        withheld: { grants: ['tool://payments/refund'] },
      });
  });

  it('refuses what the worker does not declare, and another pinned manifest', () => {
    expect(() => authorize(declared, 'sha256:x', { principal: 'agent:desk', grants: ['tool://x/y'] })).toThrow(
      RunRefused,
    );
    expect(() => authorize(declared, 'sha256:x', { principal: 'agent:desk', capabilities: ['root'] })).toThrow(
      /does not know: root/,
    );
    expect(() => authorize(declared, 'sha256:x', { principal: 'agent:desk', manifestDigest: 'sha256:y' })).toThrow(
      /pinned to manifest sha256:y/,
    );
  });

  it('resolves only model endpoints the worker declares; a URL or key variable from a run is refused', () => {
    const models = {
      local: { provider: 'openai-compatible' as const, base_url: 'http://127.0.0.1:1/v1', models: ['m1', 'm2'] },
    };
    expect(resolveModel(models, { endpoint: 'local' })).toMatchObject({ model: 'm1' });
    expect(() => resolveModel(models, { endpoint: 'local', model: 'm3' })).toThrow(/does not serve "m3"/);
    expect(() => resolveModel(models, { endpoint: 'scripted' })).toThrow(/not declared/);
    const smuggled = { endpoint: 'local', apiKeyEnv: 'AWS_SECRET_ACCESS_KEY' } as unknown as Parameters<
      typeof resolveModel
    >[1];
    expect(() => resolveModel(models, smuggled)).toThrow(ToolplaneError);
    expect(() => resolveModel(undefined, { endpoint: 'scripted' })).not.toThrow();
  });

  it('an endpoint whose script the worker declares refuses a run that sends its own', () => {
    const models = { played: { provider: 'scripted' as const, script: [{ final: 'done' }] } };
    expect(resolveModel(models, { endpoint: 'played' })).toMatchObject({ decl: { script: [{ final: 'done' }] } });
    expect(() => resolveModel(models, { endpoint: 'played', script: [{ final: 'mine' }] })).toThrow(
      /"played" plays the script this worker declares; a run may not send its own/,
    );
    expect(() =>
      resolveModel({ scripted: { provider: 'scripted' } }, { endpoint: 'scripted', script: [] }),
    ).not.toThrow();
  });
});
