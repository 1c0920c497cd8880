// Workflow-safe, step 1 of a call: an undeclared or ungranted tool, a call answering another
// offer, or arguments that fail the schema are refused here, before anything exists.
import { CatalogError } from '../../catalog/errors';
import type { OfferedTool, ToolCatalog } from '../../catalog/tool-catalog';
import { ToolCall } from '../../catalog/tool-call';
import { StepErrorCode } from '../step-error';
import { refusal, type Refusal } from './refuse';

export function prepareCall(
  catalog: ToolCatalog,
  toolId: string,
  args: unknown,
  answering?: OfferedTool,
): ToolCall | Refusal {
  if (answering && answering.toolId !== toolId)
    return refusal(StepErrorCode.Unreachable, 'answering', `the model's call named ${answering.toolId}, not ${toolId}`);
  try {
    return ToolCall.prepare(catalog, toolId, args);
  } catch (err) {
    if (!CatalogError.is(err)) throw err;
    const invalid = err.code === 'InvalidArguments';
    return refusal(
      invalid ? StepErrorCode.InvalidArguments : StepErrorCode.Unreachable,
      invalid ? 'schema' : 'unreachable',
      err.message,
    );
  }
}
