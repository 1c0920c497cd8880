// What the host application (not the model) tells the gateway beside MCP, in HTTP headers of its own
// transport: the principal's request for the session (`Toolplane-Request`), and on the stateless revision
// which conversation a request belongs to (`Toolplane-Conversation`). A model reaches the gateway only
// through tool names and arguments, so it can set neither; the bearer of the same request says whose
// they are.
import type { IncomingMessage } from 'node:http';
import type { HttpRefusal } from './bearer';

/** The header a host declares the principal's request in: base64url of its UTF-8 JSON. */
export const REQUEST_HEADER = 'toolplane-request';
/** The header naming a conversation on 2026-07-28 (1 to 128 of `A-Z a-z 0-9 . _ : -`). */
export const CONVERSATION_HEADER = 'toolplane-conversation';

const CONVERSATION = /^[A-Za-z0-9._:-]{1,128}$/;

function badRequest(message: string): HttpRefusal {
  return { status: 400, headers: {}, body: { jsonrpc: '2.0', id: null, error: { code: -32600, message } } };
}

function single(req: IncomingMessage, name: string): string | undefined | HttpRefusal {
  const v = req.headers[name];
  if (v === undefined) return undefined;
  if (Array.isArray(v)) return badRequest(`Bad Request: send the ${name} header once`);
  return v;
}

export type Declared = { ok: true; given?: unknown } | { ok: false; refusal: HttpRefusal };

/** The declared request (any JSON value; absent when none), or why the header is refused. */
export function declaredRequest(req: IncomingMessage): Declared {
  const raw = single(req, REQUEST_HEADER);
  if (raw === undefined) return { ok: true };
  if (typeof raw !== 'string') return { ok: false, refusal: raw };
  const refused = (why: string): Declared => ({ ok: false, refusal: badRequest(`Bad Request: ${why}`) });
  if (!/^[A-Za-z0-9_-]+={0,2}$/.test(raw))
    return refused('the Toolplane-Request header must be base64url of the request as UTF-8 JSON');
  try {
    return { ok: true, given: JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as unknown };
  } catch (err) {
    return refused(`the Toolplane-Request header is not base64url JSON (${(err as Error).message})`);
  }
}

/** The conversation a 2026-07-28 request names ('' when none: the principal's default one), or why it is refused. */
export function conversationOf(req: IncomingMessage): string | HttpRefusal {
  const raw = single(req, CONVERSATION_HEADER);
  if (raw === undefined) return '';
  if (typeof raw !== 'string') return raw;
  return CONVERSATION.test(raw)
    ? raw
    : badRequest('Bad Request: the Toolplane-Conversation header must be 1 to 128 of A-Z a-z 0-9 . _ : -');
}

/** Encodes a declared request as the `Toolplane-Request` header carries it. */
export function encodeDeclaredRequest(given: unknown): string {
  return Buffer.from(JSON.stringify(given), 'utf8').toString('base64url');
}
