// How a small model is made to call tools: every answer it gives is one JSON object, held to a
// grammar, either {"tool": <an offered tool's name>, "arguments": {...}} or {"answer": "..."}. The
// shim reads the structure, never the wording: whatever the model writes inside it is passed on, and
// the plane's gate judges the call as it judges any model's.
import type { GbnfJsonSchema } from 'node-llama-cpp' with { 'resolution-mode': 'import' };

/** A tool as a Chat Completions request offers it. */
export interface OfferedFunction {
  name: string;
  description?: string;
  parameters?: unknown;
}

/** What the model answered, read from the JSON the grammar held it to. */
export type ModelReply = { tool: string; arguments: Record<string, unknown> } | { answer: string };

/**
 * Strings in arguments are capped in the grammar, so a model that rambles stops inside the JSON
 * and the reply stays whole; the gate sees the (possibly clipped) value.
 */
export const MAX_ARGUMENT_CHARS = 80;
export const MAX_ANSWER_CHARS = 600;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const SCALARS = ['string', 'number', 'integer', 'boolean', 'null'] as const;
type Scalar = (typeof SCALARS)[number];
const isScalar = (v: unknown): v is Scalar => typeof v === 'string' && (SCALARS as readonly string[]).includes(v);

/**
 * The grammar's shape for a JSON Schema of tool arguments: types, enums, constants, objects and
 * arrays carry over; patterns and numeric bounds do not (the gate checks them). An object asks for
 * its required properties only, so the model writes no optional field it was not asked for.
 */
export function grammarSchema(schema: unknown): GbnfJsonSchema {
  if (!isObject(schema)) return { type: 'string', maxLength: MAX_ARGUMENT_CHARS };
  if ('const' in schema && (isScalar(typeof schema.const) || schema.const === null))
    return { const: schema.const as string | number | boolean | null };
  if (
    Array.isArray(schema.enum) &&
    schema.enum.every((v) => v === null || ['string', 'number', 'boolean'].includes(typeof v))
  )
    return { enum: schema.enum as (string | number | boolean | null)[] };
  for (const key of ['oneOf', 'anyOf'] as const) {
    const options = schema[key];
    if (Array.isArray(options) && options.length) return { oneOf: options.map(grammarSchema) };
  }
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'object': {
      const properties = isObject(schema.properties) ? schema.properties : {};
      const required = Array.isArray(schema.required)
        ? schema.required.filter((k): k is string => typeof k === 'string' && k in properties)
        : Object.keys(properties);
      return {
        type: 'object',
        properties: Object.fromEntries(required.map((k) => [k, grammarSchema(properties[k])])),
        additionalProperties: false,
      };
    }
    case 'array':
      return { type: 'array', items: grammarSchema(schema.items), maxItems: 5 };
    case 'string': {
      const max =
        typeof schema.maxLength === 'number' ? Math.min(schema.maxLength, MAX_ARGUMENT_CHARS) : MAX_ARGUMENT_CHARS;
      return { type: 'string', maxLength: max };
    }
    case 'number':
    case 'integer':
    case 'boolean':
    case 'null':
      return { type };
    default:
      return { type: 'string', maxLength: MAX_ARGUMENT_CHARS };
  }
}

/** The grammar every answer is held to while tools are offered. */
export function replySchema(tools: OfferedFunction[]): GbnfJsonSchema {
  return {
    oneOf: [
      ...tools.map((t): GbnfJsonSchema => ({
        type: 'object',
        properties: { tool: { const: t.name }, arguments: grammarSchema(t.parameters ?? { type: 'object' }) },
      })),
      { type: 'object', properties: { answer: { type: 'string', maxLength: MAX_ANSWER_CHARS } } },
    ],
  };
}

/** A tool call as the model is shown its own earlier calls: in the format it is asked to write. */
export function formatToolCall(name: string, args: string): string {
  let parsed: unknown = args;
  try {
    parsed = JSON.parse(args);
  } catch {
    // Arguments that are not JSON are shown as the string they are.
  }
  return JSON.stringify({ tool: name, arguments: parsed });
}

/** One argument as the instructions name it: its name, and what its declaration says it must be. */
function describeField(name: string, schema: unknown): string {
  if (!isObject(schema)) return name;
  const notes = [
    typeof schema.type === 'string' ? schema.type : undefined,
    Array.isArray(schema.enum) ? `one of ${schema.enum.map((v) => JSON.stringify(v)).join(', ')}` : undefined,
    typeof schema.pattern === 'string' ? `matching ${schema.pattern}` : undefined,
    typeof schema.description === 'string' ? schema.description : undefined,
  ].filter(Boolean);
  return notes.length ? `${name} (${notes.join('; ')})` : name;
}

/** The instructions appended to the system prompt while tools are offered. */
export function toolInstructions(tools: OfferedFunction[]): string {
  const lines = tools.map((t) => {
    const params = isObject(t.parameters) ? t.parameters : {};
    const properties = isObject(params.properties) ? params.properties : {};
    const asked = grammarSchema(params);
    const fields = 'properties' in asked && asked.properties ? Object.keys(asked.properties) : [];
    return `- ${t.name}: ${t.description ?? ''} Arguments: ${fields.map((f) => describeField(f, properties[f])).join(', ') || 'none'}`;
  });
  return [
    'You can call these tools:',
    ...lines,
    'Answer with one JSON object. To call a tool: {"tool": "<name>", "arguments": {...}}.',
    'To reply to the user, when you are done or no tool helps: {"answer": "..."}, written for the user.',
  ].join('\n');
}

/**
 * Reads the model's JSON. The grammar makes it parse; should it not (a reply cut off at the token
 * limit), it is passed on as a plain answer, never guessed at.
 */
export function readReply(text: string, tools: OfferedFunction[]): ModelReply {
  try {
    const parsed: unknown = JSON.parse(text);
    if (isObject(parsed)) {
      if (typeof parsed.tool === 'string' && tools.some((t) => t.name === parsed.tool))
        return { tool: parsed.tool, arguments: isObject(parsed.arguments) ? parsed.arguments : {} };
      if (typeof parsed.answer === 'string') return { answer: parsed.answer };
    }
  } catch {
    // Not JSON: the text is the answer.
  }
  return { answer: text };
}
