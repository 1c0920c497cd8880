// The model seam: what a turn takes and returns. Plain JSON: it is written to history.
import type { ModelRequest } from '../../catalog/authority';
import type { OfferedTool } from '../../catalog/tool-catalog';
import type { ChatMessage } from '../../common/wire';

export interface ModelTurnRequest {
  model: ModelRequest;
  messages: ChatMessage[];
  tools: OfferedTool[];
}
