// The CLI's exit codes, documented in `--help` and the README.
import { ToolplaneError } from '../catalog/errors';
import { ErrorCode } from '../catalog/error-codes';

export const ExitCode = {
  Ok: 0,
  /** The run failed, was cancelled, ended on a limit or was refused; or what was asked for does not exist (or has finished). */
  Failed: 1,
  /** The command line was wrong: unknown command or option, missing argument, bad manifest or value. */
  Usage: 2,
  /** No Temporal server answered at the address. */
  Unreachable: 3,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

export const EXIT_CODES_HELP = `
Exit codes:
  0  ok
  1  the run failed, was cancelled, ended on a limit or was refused (or the run does not exist, or has finished when answered)
  2  usage error: unknown command or option, missing or invalid argument, invalid manifest or run input
  3  the Temporal server is unreachable

Connection (every command that talks to Temporal, and the worker): --address, --namespace and
--profile, over TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS_* and the
profile (TEMPORAL_PROFILE) of the Temporal config file (TEMPORAL_CONFIG_FILE). Default 127.0.0.1:7233.
Web UI links: --ui-url, else TEMPORAL_UI_URL, else a local server's port + 1000.
A secured cluster (\`npm run cluster\`) wants TLS files and a token whose role allows the command:
  TEMPORAL_TLS_CA, TEMPORAL_TLS_CERT, TEMPORAL_TLS_KEY   its CA, and this client's certificate and key
      (or envconfig's TEMPORAL_TLS_SERVER_CA_CERT_PATH, TEMPORAL_TLS_CLIENT_CERT_PATH, TEMPORAL_TLS_CLIENT_KEY_PATH,
      TEMPORAL_TLS_SERVER_NAME)
  TEMPORAL_API_KEY   the token: a run starter's for run; an operator's for list, describe, show, approve, deny,
      resolve, cancel, reset; a worker's for worker`;

/** A command already said what happened (the run's outcome, as text or JSON); only the exit code is left. */
export class CommandFailed extends ToolplaneError<typeof ErrorCode.CommandFailed, { exitCode: ExitCode }> {
  constructor(message: string, exitCode: ExitCode = ExitCode.Failed) {
    super(ErrorCode.CommandFailed, message, { exitCode });
  }
}

export function usageError(message: string): ToolplaneError<typeof ErrorCode.UsageError> {
  return new ToolplaneError(ErrorCode.UsageError, message);
}
