// The one error the native cluster throws: which step failed, and what to look at.
import { ToolplaneError } from '../../catalog/errors';

export type ClusterStep =
  'binaries' | 'credentials' | 'postgres' | 'schema' | 'service' | 'namespace' | 'search-attributes' | 'ui' | 'fault';

export class ClusterFailed extends ToolplaneError<'ClusterFailed', { step: ClusterStep; logFile?: string }> {
  constructor(
    readonly step: ClusterStep,
    message: string,
    readonly logFile?: string,
  ) {
    super('ClusterFailed', `cluster ${step}: ${message}${logFile ? ` (log: ${logFile})` : ''}`, { step, logFile });
  }
}
