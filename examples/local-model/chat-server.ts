// A small OpenAI-compatible server (Chat Completions, with or without `stream: true`) in front of the
// local model, so the worker reaches it as it reaches any model endpoint its manifest declares:
// `provider: openai-compatible` with this server's base URL.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ChatAnswer, ChatMessageIn, LocalChatModel } from './chat-model';
import type { OfferedFunction } from './reply-format';

interface CompletionRequest {
  model?: string;
  messages?: ChatMessageIn[];
  tools?: { type?: string; function?: OfferedFunction }[];
  temperature?: number;
  max_tokens?: number;
  max_completion_tokens?: number;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
}

export interface ChatServer {
  /** The base URL a manifest declares: `http://127.0.0.1:<port>/v1`. */
  baseUrl: string;
  close(): Promise<void>;
}

class BadRequest extends Error {}

function parseRequest(body: string): CompletionRequest {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw new BadRequest('the body is not JSON');
  }
  if (typeof parsed !== 'object' || parsed === null) throw new BadRequest('the body is not a JSON object');
  const req = parsed as CompletionRequest;
  if (!Array.isArray(req.messages) || req.messages.length === 0)
    throw new BadRequest('messages: a non-empty array is required');
  return req;
}

/** The assistant message and finish reason of an answer, in Chat Completions' shape. */
function assistantMessage(answer: ChatAnswer, id: string) {
  const { reply } = answer;
  if ('tool' in reply)
    return {
      message: {
        role: 'assistant' as const,
        content: null,
        tool_calls: [
          {
            id: `call_${id}`,
            type: 'function' as const,
            function: { name: reply.tool, arguments: JSON.stringify(reply.arguments) },
          },
        ],
      },
      finish: 'tool_calls',
    };
  return {
    message: { role: 'assistant' as const, content: reply.answer },
    finish: answer.truncated ? 'length' : 'stop',
  };
}

function usage(answer: ChatAnswer) {
  return {
    prompt_tokens: answer.inputTokens,
    completion_tokens: answer.outputTokens,
    total_tokens: answer.inputTokens + answer.outputTokens,
  };
}

/** Starts the server on 127.0.0.1 (port 0: any free port). */
export function startChatServer(model: LocalChatModel, modelId: string, port = 0): Promise<ChatServer> {
  let served = 0;
  const server = http.createServer((req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const url = req.url ?? '';
    if (req.method === 'GET' && url.endsWith('/models')) {
      send(200, { object: 'list', data: [{ id: modelId, object: 'model', owned_by: 'local' }] });
      return;
    }
    if (req.method !== 'POST' || !url.endsWith('/chat/completions')) {
      send(404, { error: { message: `no route ${req.method} ${url}`, type: 'not_found' } });
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        try {
          const body = parseRequest(Buffer.concat(chunks).toString('utf8'));
          const tools = (body.tools ?? []).flatMap((t) => (t.function?.name ? [t.function] : []));
          const answer = await model.answer({
            messages: body.messages!,
            tools,
            ...(body.temperature !== undefined ? { temperature: body.temperature } : {}),
            ...((body.max_completion_tokens ?? body.max_tokens) !== undefined
              ? { maxTokens: body.max_completion_tokens ?? body.max_tokens }
              : {}),
          });
          const id = `local-${process.pid}-${++served}`;
          const created = Math.floor(Date.now() / 1000);
          const { message, finish } = assistantMessage(answer, String(served));
          if (!body.stream) {
            send(200, {
              id,
              object: 'chat.completion',
              created,
              model: modelId,
              choices: [{ index: 0, message, finish_reason: finish }],
              usage: usage(answer),
            });
            return;
          }
          // Streamed: the whole answer is generated first (the grammar needs it whole to be read),
          // then sent as Server-Sent Events in the chunks a client expects.
          res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
          const chunk = (delta: object, finishReason: string | null, extra: object = {}) =>
            res.write(
              `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: modelId, choices: [{ index: 0, delta, finish_reason: finishReason }], ...extra })}\n\n`,
            );
          if (message.content !== null) chunk({ role: 'assistant', content: message.content }, null);
          else chunk({ role: 'assistant', tool_calls: message.tool_calls.map((c, index) => ({ index, ...c })) }, null);
          chunk({}, finish);
          if (body.stream_options?.include_usage)
            res.write(
              `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: modelId, choices: [], usage: usage(answer) })}\n\n`,
            );
          res.end('data: [DONE]\n\n');
        } catch (err) {
          const bad = err instanceof BadRequest;
          if (res.headersSent) res.end();
          else
            send(bad ? 400 : 500, {
              error: {
                message: err instanceof Error ? err.message : String(err),
                type: bad ? 'invalid_request_error' : 'server_error',
              },
            });
        }
      })();
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const { port: bound } = server.address() as AddressInfo;
      resolve({
        baseUrl: `http://127.0.0.1:${bound}/v1`,
        close: () => new Promise<void>((done) => server.close(() => done())),
      });
    });
  });
}
