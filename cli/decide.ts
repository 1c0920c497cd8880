// `toolplane approve | deny | resolve`: a person answers a call that waits. Approvals are answered
// with approve or deny; an in-doubt call with resolve retry|landed|abort. On a worker with an identity
// the answer carries the approver's credential (--credential, --credential-file or TOOLPLANE_CREDENTIAL),
// and the run records its verified subject as who decided.
import fs from 'node:fs';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import type { Command } from 'commander';
import { decide } from '../inspect/decisions';
import type { EscalationDecision } from '../workflows/escalation';
import { ToolplaneError } from '../catalog/errors';
import { shellWord } from '../inspect/connection';
import { usageError } from './exit-codes';
import { emit, onRunningRun, withClient, withCommonOptions, type Cli, type CommonOptions } from './shared';
import { ErrorCode } from '../catalog/error-codes';

interface DecideOptions extends CommonOptions {
  by?: string;
  reason?: string;
  output?: string;
  credential?: string;
  credentialFile?: string;
}

/** The environment variable an approver's credential is read from when no flag gives one. */
export const CREDENTIAL_ENV = 'TOOLPLANE_CREDENTIAL';

/**
 * Who answers: the approver's credential (flag, file, or environment), and a `by` only where the
 * person gave one, or, without a credential, `$USER` (a worker without identity records it as given).
 */
export function decider(
  opts: DecideOptions,
  env: NodeJS.ProcessEnv = process.env,
): Pick<EscalationDecision, 'by' | 'credential'> {
  if (opts.credential !== undefined && opts.credentialFile !== undefined)
    throw usageError('give the credential once: --credential or --credential-file');
  let credential = opts.credential;
  if (opts.credentialFile !== undefined) {
    try {
      credential = fs.readFileSync(opts.credentialFile, 'utf8').trim();
    } catch (err) {
      throw usageError(
        `--credential-file ${opts.credentialFile}: cannot read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
      );
    }
  }
  credential ??= env[CREDENTIAL_ENV] || undefined;
  if (credential !== undefined && credential.trim() === '') throw usageError('the credential is empty');
  const by = opts.by ?? (credential === undefined ? env.USER : undefined);
  return {
    ...(by !== undefined ? { by } : {}),
    ...(credential !== undefined ? { credential: credential.trim() } : {}),
  };
}

export function withDeciderOptions(command: Command): Command {
  return command
    .option(
      '--credential <jwt>',
      `the approver's own credential, a JWT from an issuer the worker trusts (default: $${CREDENTIAL_ENV})`,
    )
    .option('--credential-file <path>', "a file holding the approver's credential")
    .option(
      '--by <who>',
      'who decided: recorded as given only by a worker without identity (default: $USER); with a credential it must be its subject',
    );
}

const RESOLUTIONS = ['retry', 'landed', 'abort'] as const;

type Answer = (workflowId: string, decision: EscalationDecision, opts: DecideOptions, done: string) => Promise<void>;

/** Sends a decision to the run and prints whom it recorded as deciding (never the credential). */
function answering(cli: Cli): Answer {
  return async (workflowId, decision, opts, done) =>
    withClient(opts, async (c, settings) => {
      let by = decision.by;
      await onRunningRun(c, workflowId, settings, async () => {
        try {
          ({ by } = await decide(c, workflowId, decision));
        } catch (err) {
          // The run refused the answer (it answers no waiting question, or the worker did not accept who decides).
          if (err instanceof WorkflowUpdateFailedError)
            throw new ToolplaneError(
              ErrorCode.DecisionRefused,
              `${workflowId} refused "${decision.decision}" for ${decision.effectKey}: ${err.cause?.message ?? err.message}`,
            );
          throw err;
        }
      });
      // Never printed: the credential. Printed: whom the run recorded as deciding.
      const { credential: _credential, by: _asked, ...shown } = decision;
      emit(cli, opts, { workflowId, ...shown, ...(by !== undefined ? { by } : {}) }, () => [
        `${workflowId}: ${decision.effectKey} ${done}${by ? ` by ${by}` : ''}`,
      ]);
    });
}

export function registerDecide(program: Command, cli: Cli): void {
  const answer = answering(cli);

  withCommonOptions(
    withDeciderOptions(
      program
        .command('approve <workflowId> <effectKey>')
        .description("approve a call that waits for a person's approval")
        .option('--reason <text>', 'why (recorded in the run)'),
    ),
  ).action((workflowId: string, effectKey: string, opts: DecideOptions) =>
    answer(
      workflowId,
      { effectKey, decision: 'approve', ...decider(opts), ...(opts.reason ? { reason: opts.reason } : {}) },
      opts,
      'approved',
    ),
  );

  withCommonOptions(
    withDeciderOptions(
      program
        .command('deny <workflowId> <effectKey>')
        .description("deny a call that waits for a person's approval; the run records the reason")
        .requiredOption('--reason <text>', 'why (shown in `show` and the journal)'),
    ),
  ).action((workflowId: string, effectKey: string, opts: DecideOptions) =>
    answer(workflowId, { effectKey, decision: 'deny', ...decider(opts), reason: opts.reason }, opts, 'denied'),
  );

  registerConfirm(program, answer);

  withCommonOptions(
    withDeciderOptions(
      program
        .command('resolve <workflowId> <effectKey> <decision>')
        .description(
          'decide an in-doubt call (its outcome is unknown): retry it, record it as landed (--output), or abort it',
        )
        .option('--output <json>', 'the output to record when the call landed')
        .option('--reason <text>', 'why (for abort)'),
    ),
  ).action((workflowId: string, effectKey: string, decision: string, opts: DecideOptions) =>
    answer(workflowId, resolution(workflowId, effectKey, decision, opts), opts, decision),
  );
}

/** `confirm` and `reject`: the run's principal answers a question about a value (`principal_confirms`). */
function registerConfirm(program: Command, answer: Answer): void {
  withCommonOptions(
    withDeciderOptions(
      program
        .command('confirm <workflowId> <effectKey> <value>')
        .description(
          "as the run's principal, vouch for the value a call waits on you about: it becomes your words in the run",
        ),
    ),
  ).action((workflowId: string, effectKey: string, value: string, opts: DecideOptions) =>
    answer(workflowId, { effectKey, decision: 'confirm', value, ...decider(opts) }, opts, 'confirmed'),
  );

  withCommonOptions(
    withDeciderOptions(
      program
        .command('reject <workflowId> <effectKey>')
        .description("as the run's principal, refuse the value a call waits on you about: the call is refused")
        .option('--reason <text>', 'why (recorded in the run)'),
    ),
  ).action((workflowId: string, effectKey: string, opts: DecideOptions) =>
    answer(
      workflowId,
      { effectKey, decision: 'reject', ...decider(opts), ...(opts.reason ? { reason: opts.reason } : {}) },
      opts,
      'rejected',
    ),
  );
}

export function resolution(
  workflowId: string,
  effectKey: string,
  decision: string,
  opts: DecideOptions,
): EscalationDecision {
  switch (decision) {
    case 'landed': {
      let output: unknown = null;
      if (opts.output !== undefined) {
        try {
          output = JSON.parse(opts.output) as unknown;
        } catch (err) {
          throw usageError(`--output must be JSON: ${(err as Error).message}`);
        }
      }
      return { effectKey, decision, output, ...decider(opts) };
    }
    case 'retry':
      return { effectKey, decision, ...decider(opts) };
    case 'abort':
      return { effectKey, decision, ...decider(opts), ...(opts.reason ? { reason: opts.reason } : {}) };
    case 'approve':
    case 'deny': {
      // The connection flags as typed: the command is said before anything is resolved or connected.
      const flags = [
        ...(opts.profile ? ['--profile', opts.profile] : []),
        ...(opts.address ? ['--address', opts.address] : []),
        ...(opts.namespace ? ['--namespace', opts.namespace] : []),
      ].map(shellWord);
      throw usageError(
        `resolve decides in-doubt calls (${RESOLUTIONS.join(', ')}); an approval is answered with\n` +
          `  ${['toolplane', decision, shellWord(workflowId), shellWord(effectKey), ...(decision === 'deny' ? ['--reason "<why>"'] : []), ...flags].join(' ')}`,
      );
    }
    default:
      throw usageError(`resolve's decision must be ${RESOLUTIONS.join(', ')}, not "${decision}"`);
  }
}
