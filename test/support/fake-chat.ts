// A real HTTP server speaking Chat Completions, scripted per turn; it records what it was sent.
import { failureAnswer, isFailure, startFakeServer, type FailureReply, type FakeServer } from './fake-http';

export interface ChatRequest {
  auth?: string;
  body: {
    model: string;
    messages: { role: string; content: string | null; tool_call_id?: string }[];
    tools?: { function: { name: string } }[];
  };
}

export type Reply =
  { tool_calls: { id: string; name: string; arguments: string }[] } | { content: string } | FailureReply;

export async function startFakeChat(
  reply: (req: ChatRequest, turn: number) => Reply,
): Promise<{ baseUrl: string; requests: ChatRequest[]; close(): Promise<void> }> {
  const requests: ChatRequest[] = [];
  const server: FakeServer<ChatRequest['body']> = await startFakeServer((rec) => {
    const entry: ChatRequest = { auth: rec.headers.authorization, body: rec.body };
    requests.push(entry);
    const r = reply(entry, requests.length - 1);
    if (isFailure(r)) return failureAnswer(r);
    const message =
      'tool_calls' in r
        ? {
            role: 'assistant',
            content: null,
            tool_calls: r.tool_calls.map((c) => ({
              id: c.id,
              type: 'function',
              function: { name: c.name, arguments: c.arguments },
            })),
          }
        : { role: 'assistant', content: r.content };
    return {
      status: 200,
      body: JSON.stringify({
        id: `chatcmpl-${requests.length}`,
        object: 'chat.completion',
        created: 1_780_000_000,
        model: `${entry.body.model}-2026`,
        choices: [{ index: 0, message, finish_reason: 'tool_calls' in r ? 'tool_calls' : 'stop' }],
        usage: { prompt_tokens: 120, completion_tokens: 30, total_tokens: 150 },
      }),
    };
  });
  return { baseUrl: server.baseUrl, requests, close: () => server.close() };
}
