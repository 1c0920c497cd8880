// The ledger server's tools, as it lists them over MCP: each input is one zod schema, which the server
// parses every call with and lists as JSON Schema (zod's own conversion, as toolplane's defineTool derives it).
import { z } from 'zod';

/** Each tool's input, by tool name. */
export const LEDGER_INPUTS = {
  add_entry: z.strictObject({ account: z.string(), amount_cents: z.int(), memo: z.string().optional() }),
  list_entries: z.strictObject({ account: z.string() }),
  reconcile: z.strictObject({ idempotency_key: z.string() }),
  big_report: z.strictObject({ size_mb: z.number() }),
  chart: z.strictObject({ account: z.string() }),
  undeclared_admin: z.strictObject({}),
};

/** What a model sends, as JSON Schema draft-07 without `$schema`: the declaration the manifest pins. */
function listed(name: keyof typeof LEDGER_INPUTS): { type: 'object'; [key: string]: unknown } {
  const { $schema: _draft, ...schema } = z.toJSONSchema(LEDGER_INPUTS[name], { target: 'draft-7', io: 'input' });
  return { ...schema, type: 'object' };
}

export const LEDGER_TOOLS = [
  {
    name: 'add_entry',
    description: 'Add an entry to an account ledger. Honours the idempotency key in _meta.',
    inputSchema: listed('add_entry'),
    annotations: { destructiveHint: false, idempotentHint: true },
  },
  {
    name: 'list_entries',
    description: "List an account's ledger entries.",
    inputSchema: listed('list_entries'),
    annotations: { readOnlyHint: true },
  },
  {
    name: 'reconcile',
    description: 'Whether the call with this idempotency key landed.',
    inputSchema: listed('reconcile'),
    annotations: { readOnlyHint: true },
  },
  {
    name: 'big_report',
    description: 'A large text report.',
    inputSchema: listed('big_report'),
    annotations: { readOnlyHint: true },
  },
  {
    name: 'chart',
    description: "A chart of an account's balance.",
    inputSchema: listed('chart'),
    annotations: { readOnlyHint: true },
  },
  {
    name: 'undeclared_admin',
    description: 'Wipe the ledger. No manifest declares this.',
    inputSchema: listed('undeclared_admin'),
  },
];
