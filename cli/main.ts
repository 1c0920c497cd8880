// Runs the program and turns what ended it into an exit code (see exit-codes.ts).
import { CommanderError } from 'commander';
import { ToolplaneError } from '../catalog/errors';
import { ExitCode } from './exit-codes';
import { buildProgram } from './program';
import { formatCauseChain } from './shared';
import { ErrorCode } from '../catalog/error-codes';

export function exitCodeOf(err: unknown): ExitCode {
  if (err instanceof CommanderError) return err.exitCode === 0 ? ExitCode.Ok : ExitCode.Usage;
  if (ToolplaneError.is(err)) {
    if (err.code === ErrorCode.CommandFailed) return (err.data as { exitCode: ExitCode }).exitCode;
    if (
      err.code === ErrorCode.ManifestInvalid ||
      err.code === ErrorCode.UsageError ||
      err.code === ErrorCode.RunInputInvalid
    )
      return ExitCode.Usage;
    if (err.code === ErrorCode.TemporalUnreachable) return ExitCode.Unreachable;
  }
  return ExitCode.Failed;
}

/** gRPC PERMISSION_DENIED (7) anywhere in the cause chain: the server's authorizer said no. */
function permissionDenied(err: unknown): boolean {
  const seen = new Set<unknown>();
  for (let e: unknown = err; e && typeof e === 'object' && !seen.has(e); e = (e as { cause?: unknown }).cause) {
    seen.add(e);
    if ((e as { code?: unknown }).code === 7) return true;
  }
  return false;
}

export async function main(
  argv: string[],
  out: (line: string) => void = console.log,
  err: (line: string) => void = console.error,
): Promise<number> {
  try {
    await buildProgram(out, err).parseAsync(argv);
    return ExitCode.Ok;
  } catch (e) {
    const code = exitCodeOf(e);
    // Commander printed its own message; a CommandFailed already said what happened.
    const said = e instanceof CommanderError || (ToolplaneError.is(e) && e.code === ErrorCode.CommandFailed);
    if (!said) for (const l of ToolplaneError.is(e) ? [e.message] : formatCauseChain(e)) err(l);
    if (!said && permissionDenied(e))
      err(
        'The Temporal server refused this credential: the token in TEMPORAL_API_KEY (or the profile) lacks the role this command needs, or there is none (see `toolplane --help`, Connection).',
      );
    return code;
  }
}
