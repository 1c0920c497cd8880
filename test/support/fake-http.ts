// A real HTTP server for fake model providers: records every request, answers each with a
// scripted reply, or with a failure (a status and headers, or a body that is not a model response).
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A reply that is not a model answer: an HTTP error, or a 200 whose body is broken. */
export type FailureReply = { status: number; headers?: Record<string, string>; body?: string } | { malformed: string };

export function isFailure(r: object): r is FailureReply {
  return 'status' in r || 'malformed' in r;
}

export interface Recorded<B> {
  headers: http.IncomingHttpHeaders;
  body: B;
}

export interface FakeServer<B> {
  baseUrl: string;
  requests: Recorded<B>[];
  close(): Promise<void>;
}

/** `answer` returns the status, headers and JSON body for one recorded request. */
export async function startFakeServer<B>(
  answer: (req: Recorded<B>, n: number) => { status: number; headers?: Record<string, string>; body: string },
): Promise<FakeServer<B>> {
  const requests: Recorded<B>[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', () => {
      const entry: Recorded<B> = {
        headers: req.headers,
        body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as B,
      };
      requests.push(entry);
      const out = answer(entry, requests.length - 1);
      res.writeHead(out.status, { 'content-type': 'application/json', ...out.headers });
      res.end(out.body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    requests,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** The HTTP answer for a failure reply. */
export function failureAnswer(r: FailureReply): { status: number; headers?: Record<string, string>; body: string } {
  if ('malformed' in r) return { status: 200, body: r.malformed };
  return {
    status: r.status,
    headers: r.headers,
    body: r.body ?? JSON.stringify({ error: { message: `fake failure ${r.status}`, type: 'fake' } }),
  };
}
