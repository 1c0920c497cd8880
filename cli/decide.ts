// `toolplane approve | deny | resolve`: a person answers a call that waits. Approvals are answered
// with approve or deny; an in-doubt call with resolve retry|landed|abort.
import { WorkflowUpdateFailedError } from '@temporalio/client';
import type { Command } from 'commander';
import { decide, type EscalationDecision } from '../client';
import { ToolplaneError } from '../catalog/errors';
import { shellWord } from '../inspect/connection';
import { usageError } from './exit-codes';
import { emit, onRunningRun, withClient, withCommonOptions, type Cli, type CommonOptions } from './shared';

interface DecideOptions extends CommonOptions {
  by?: string;
  reason?: string;
  output?: string;
}

const RESOLUTIONS = ['retry', 'landed', 'abort'] as const;

export function registerDecide(program: Command, cli: Cli): void {
  const answer = async (workflowId: string, decision: EscalationDecision, opts: DecideOptions, done: string) =>
    withClient(opts, async (c, settings) => {
      await onRunningRun(c, workflowId, settings, async () => {
        try {
          await decide(c, workflowId, decision);
        } catch (err) {
          // The run refused the answer (it does not answer the question, or nothing waits under that key).
          if (err instanceof WorkflowUpdateFailedError)
            throw new ToolplaneError(
              'DecisionRefused',
              `${workflowId} refused "${decision.decision}" for ${decision.effectKey}: ${err.cause?.message ?? err.message}`,
            );
          throw err;
        }
      });
      emit(cli, opts, { workflowId, ...decision }, () => [
        `${workflowId}: ${decision.effectKey} ${done}${decision.by ? ` by ${decision.by}` : ''}`,
      ]);
    });

  withCommonOptions(
    program
      .command('approve <workflowId> <effectKey>')
      .description("approve a call that waits for a person's approval")
      .option('--by <who>', 'who decided (default: $USER)', process.env.USER)
      .option('--reason <text>', 'why (recorded in the run)'),
  ).action((workflowId: string, effectKey: string, opts: DecideOptions) =>
    answer(
      workflowId,
      { effectKey, decision: 'approve', by: opts.by, ...(opts.reason ? { reason: opts.reason } : {}) },
      opts,
      'approved',
    ),
  );

  withCommonOptions(
    program
      .command('deny <workflowId> <effectKey>')
      .description("deny a call that waits for a person's approval; the run records the reason")
      .requiredOption('--reason <text>', 'why (shown in `show` and the journal)')
      .option('--by <who>', 'who decided (default: $USER)', process.env.USER),
  ).action((workflowId: string, effectKey: string, opts: DecideOptions) =>
    answer(workflowId, { effectKey, decision: 'deny', by: opts.by, reason: opts.reason }, opts, 'denied'),
  );

  withCommonOptions(
    program
      .command('resolve <workflowId> <effectKey> <decision>')
      .description(
        'decide an in-doubt call (its outcome is unknown): retry it, record it as landed (--output), or abort it',
      )
      .option('--output <json>', 'the output to record when the call landed')
      .option('--by <who>', 'who decided (default: $USER)', process.env.USER)
      .option('--reason <text>', 'why (for abort)'),
  ).action((workflowId: string, effectKey: string, decision: string, opts: DecideOptions) =>
    answer(workflowId, resolution(workflowId, effectKey, decision, opts), opts, decision),
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
      return { effectKey, decision, output, by: opts.by };
    }
    case 'retry':
      return { effectKey, decision, by: opts.by };
    case 'abort':
      return { effectKey, decision, by: opts.by, reason: opts.reason };
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
