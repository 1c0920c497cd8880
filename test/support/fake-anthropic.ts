// A real HTTP server speaking Anthropic's Messages API, scripted per turn; it records what it was sent.
import { failureAnswer, isFailure, startFakeServer, type FailureReply, type FakeServer } from './fake-http';

type Block =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown }
  | { type: 'tool_result'; tool_use_id: string; content: string | { type: 'text'; text: string }[] };

export interface MessagesRequest {
  apiKey?: string;
  body: {
    model: string;
    max_tokens: number;
    system?: string | { type: 'text'; text: string }[];
    messages: { role: 'user' | 'assistant'; content: string | Block[] }[];
    tools?: { name: string; description?: string; input_schema: unknown }[];
  };
}

export type AnthropicReply =
  { tool_use: { id: string; name: string; input: unknown }[] } | { text: string } | FailureReply;

/** The text of every tool result the request carries, in order. */
export function toolResults(req: MessagesRequest): string[] {
  return req.body.messages.flatMap((m) =>
    typeof m.content === 'string'
      ? []
      : m.content
          .filter((b): b is Extract<Block, { type: 'tool_result' }> => b.type === 'tool_result')
          .map((b) => (typeof b.content === 'string' ? b.content : b.content.map((c) => c.text).join(''))),
  );
}

export async function startFakeAnthropic(
  reply: (req: MessagesRequest, turn: number) => AnthropicReply,
): Promise<{ baseUrl: string; requests: MessagesRequest[]; close(): Promise<void> }> {
  const requests: MessagesRequest[] = [];
  const server: FakeServer<MessagesRequest['body']> = await startFakeServer((rec) => {
    const key = rec.headers['x-api-key'];
    const entry: MessagesRequest = { apiKey: Array.isArray(key) ? key[0] : key, body: rec.body };
    requests.push(entry);
    const r = reply(entry, requests.length - 1);
    if (isFailure(r)) return failureAnswer(r);
    const content =
      'tool_use' in r
        ? r.tool_use.map((c) => ({ type: 'tool_use', id: c.id, name: c.name, input: c.input }))
        : [{ type: 'text', text: r.text }];
    return {
      status: 200,
      body: JSON.stringify({
        id: `msg_${requests.length}`,
        type: 'message',
        role: 'assistant',
        model: `${entry.body.model}-20260101`,
        content,
        stop_reason: 'tool_use' in r ? 'tool_use' : 'end_turn',
        stop_sequence: null,
        usage: { input_tokens: 210, output_tokens: 40 },
      }),
    };
  });
  return { baseUrl: server.baseUrl, requests, close: () => server.close() };
}
