// A real HTTP server speaking Chat Completions, scripted per turn; it records what it was sent.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ChatRequest {
  auth?: string;
  body: {
    model: string;
    messages: { role: string; content: string | null; tool_call_id?: string }[];
    tools?: { function: { name: string } }[];
  };
}

export type Reply = { tool_calls: { id: string; name: string; arguments: string }[] } | { content: string };

export async function startFakeChat(
  reply: (req: ChatRequest, turn: number) => Reply,
): Promise<{ baseUrl: string; requests: ChatRequest[]; close(): Promise<void> }> {
  const requests: ChatRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', () => {
      const entry: ChatRequest = {
        auth: req.headers.authorization,
        body: JSON.parse(Buffer.concat(chunks).toString('utf8')),
      };
      requests.push(entry);
      const r = reply(entry, requests.length - 1);
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
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          model: `${entry.body.model}-2026`,
          choices: [{ message }],
          usage: { prompt_tokens: 120, completion_tokens: 30 },
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    requests,
    close: () => new Promise((r) => server.close(() => r())),
  };
}
