// The ledger server's tool definitions, as it lists them over MCP.
export const LEDGER_TOOLS = [
  {
    name: 'add_entry',
    description: 'Add an entry to an account ledger. Honours the idempotency key in _meta.',
    inputSchema: {
      type: 'object' as const,
      properties: { account: { type: 'string' }, amount_cents: { type: 'integer' }, memo: { type: 'string' } },
      required: ['account', 'amount_cents'],
      additionalProperties: false,
    },
    annotations: { destructiveHint: false, idempotentHint: true },
  },
  {
    name: 'list_entries',
    description: "List an account's ledger entries.",
    inputSchema: {
      type: 'object' as const,
      properties: { account: { type: 'string' } },
      required: ['account'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'reconcile',
    description: 'Whether the call with this idempotency key landed.',
    inputSchema: {
      type: 'object' as const,
      properties: { idempotency_key: { type: 'string' } },
      required: ['idempotency_key'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'big_report',
    description: 'A large text report.',
    inputSchema: {
      type: 'object' as const,
      properties: { size_mb: { type: 'number' } },
      required: ['size_mb'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'chart',
    description: "A chart of an account's balance.",
    inputSchema: {
      type: 'object' as const,
      properties: { account: { type: 'string' } },
      required: ['account'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'undeclared_admin',
    description: 'Wipe the ledger. No manifest declares this.',
    inputSchema: { type: 'object' as const, properties: {}, additionalProperties: false },
  },
];
