// Tools defined once, with zod: the handler's input is typed from the schema (tsc checks this file),
// the manifest's declaration must equal the schema zod derives (a worker with another refuses to
// start and prints both), and arguments the schema rejects never reach the handler.
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { defineTool, deriveInputSchema, ToolSchemaUnrepresentable } from '../../activities/define-tool';
import { canonicalJson } from '../../catalog/digest';
import { CatalogError, RegistryDrift } from '../../catalog/errors';
import { FailureType } from '../../catalog/failure-types';
import { ToolDecl, type Manifest, type ToolDeclInput } from '../../catalog/manifest';
import { compileSchema, argumentProblems } from '../../catalog/schema';
import { runAgent } from '../support/agent';
import { harness, type Harness } from '../support/env';
import { historyOf, scheduledActivities } from '../support/history';

/** What the handler received, call by call: a call the schema rejects adds nothing. */
const received: { text: string; copies: number }[] = [];

const NoteInput = z.strictObject({
  text: z
    .string()
    .min(1)
    // A rule JSON Schema cannot say: the gate lets it through, the activity's parse does not.
    .refine((t) => !t.includes('<script'), 'must not contain markup'),
  copies: z.int().min(1).max(3).default(1),
});

const saveNote = defineTool({
  id: 'tool://notes/save',
  description: 'Save a note, in up to three copies.',
  input: NoteInput,
  safety: 'idempotent',
  origin: 'builtin',
  async call(ctx, input) {
    ctx.check();
    // z.output: the default is applied, so `copies` is a number, never undefined.
    const copies: number = input.copies;
    // @ts-expect-error the schema has no `title`: the handler's input type says so.
    void input.title;
    // @ts-expect-error `text` is a string, not a number.
    const wrong: number = input.text;
    void wrong;
    received.push({ text: input.text, copies });
    return { saved: input.text, copies };
  },
});

/** The declaration a user writes in the manifest (or prints with `toolplane manifest schemas`). */
const declared: ToolDeclInput = {
  id: 'tool://notes/save',
  description: 'Save a note, in up to three copies.',
  input_schema: {
    type: 'object',
    properties: {
      text: { type: 'string', minLength: 1 },
      copies: { type: 'integer', minimum: 1, maximum: 3, default: 1 },
    },
    required: ['text'],
    additionalProperties: false,
  },
  safety: 'idempotent',
  honours_idempotency_key: true,
  recovery: 'retry',
};

function manifestWith(decl: ToolDeclInput): Manifest {
  return { version: 1, name: 'typed', servers: { notes: { kind: 'in_process' } }, tools: [ToolDecl.parse(decl)] };
}
const manifest = manifestWith(declared);

describe('a tool defined with zod', () => {
  it('declares the JSON Schema zod derives for what a model sends (defaults optional, no $schema)', () => {
    expect(saveNote.def().inputSchema).toEqual(declared.input_schema);
    expect(deriveInputSchema(NoteInput)).not.toHaveProperty('$schema');
  });

  it('derives a schema the gate evaluates as zod does for what JSON Schema can say', () => {
    const validate = compileSchema(saveNote.def().inputSchema);
    const samples: unknown[] = [
      { text: 'hi' },
      { text: 'hi', copies: 2 },
      { text: '' },
      { text: 'hi', copies: 4 },
      { text: 'hi', copies: 1.5 },
      { text: 'hi', extra: true },
      { copies: 1 },
      { text: 7 },
    ];
    for (const s of samples)
      expect([s, argumentProblems(validate, s).length === 0]).toEqual([s, NoteInput.safeParse(s).success]);
  });

  it('is refused where it is defined when JSON Schema cannot express its input', () => {
    let caught: unknown;
    try {
      defineTool({
        id: 'tool://notes/at',
        description: 'Save a note for later.',
        input: z.strictObject({ at: z.date() }),
        safety: 'idempotent',
        origin: 'builtin',
        call: async () => null,
      });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ToolSchemaUnrepresentable);
    expect((caught as ToolSchemaUnrepresentable).data).toEqual({ toolId: 'tool://notes/at' });
  });
});

describe('a zod-defined tool on a worker', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await harness(`typed-${randomUUID()}`);
    await h.runWorker({ manifest, tools: [saveNote] });
  });
  afterAll(() => h.close());

  it('refuses to start against a manifest whose input_schema differs, naming the tool and printing both schemas', async () => {
    const laxer = manifestWith({
      ...declared,
      input_schema: {
        ...declared.input_schema,
        properties: { text: { type: 'string' }, copies: { type: 'integer', minimum: 1, maximum: 5 } },
      },
    });
    let caught: unknown;
    try {
      await h.startWorker({ manifest: laxer, tools: [saveNote] });
    } catch (err) {
      caught = err;
    }
    expect(CatalogError.is(caught)).toBe(true);
    expect(caught).toBeInstanceOf(RegistryDrift);
    const derived = canonicalJson(deriveInputSchema(NoteInput));
    expect((caught as RegistryDrift).data!.problems).toEqual([
      {
        toolId: 'tool://notes/save',
        field: 'input_schema',
        declared: canonicalJson(laxer.tools[0]!.input_schema),
        implemented: derived,
      },
    ]);
    const message = (caught as Error).message;
    expect(message).toContain('tool://notes/save: input_schema differs');
    expect(message).toContain(`implementation: ${derived}`);
    expect(message).toContain(`manifest:       ${canonicalJson(laxer.tools[0]!.input_schema)}`);
  });

  it('hands the handler the parsed input, its defaults applied', async () => {
    const { result } = await runAgent(h, manifest, {
      prompt: 'Save the note "buy milk".',
      turns: [{ tool_calls: [{ name: 'notes__save', arguments: { text: 'buy milk' } }] }, { final: 'saved' }],
    });
    expect(result.journal[0]).toMatchObject({ toolId: 'tool://notes/save', decision: 'allowed', outcome: 'ok' });
    expect(received).toContainEqual({ text: 'buy milk', copies: 1 });
  });

  it('fails a call whose arguments the schema rejects, without calling the handler and without retrying', async () => {
    const before = received.length;
    const { result, workflowId } = await runAgent(h, manifest, {
      prompt: 'Save the note "<script>alert(1)</script>".',
      turns: [
        { tool_calls: [{ name: 'notes__save', arguments: { text: '<script>alert(1)</script>' } }] },
        { final: 'could not save' },
      ],
    });
    // The gate's JSON Schema admits it (it cannot say "no markup"): the activity ran, and refused before the handler.
    expect(result.journal[0]).toMatchObject({ toolId: 'tool://notes/save', decision: 'allowed', outcome: 'failed' });
    expect(result.journal[0]!.error!.message).toContain('/text must not contain markup');
    expect(received).toHaveLength(before);
    const events = await historyOf(h.client, workflowId);
    const failures = events
      .map((e) => e.activityTaskFailedEventAttributes?.failure?.cause ?? e.activityTaskFailedEventAttributes?.failure)
      .filter((f) => f !== undefined && f !== null);
    expect(failures.length).toBeGreaterThan(0);
    for (const f of failures)
      expect(f.applicationFailureInfo).toMatchObject({ type: FailureType.Invalid, nonRetryable: true });
  });

  it('refuses in the workflow what the derived JSON Schema already rejects: no activity, no handler', async () => {
    const before = received.length;
    const { result, workflowId } = await runAgent(h, manifest, {
      prompt: 'Save the note "hello" nine times.',
      turns: [
        { tool_calls: [{ name: 'notes__save', arguments: { text: 'hello', copies: 9 } }] },
        { final: 'could not save' },
      ],
    });
    expect(result.journal[0]).toMatchObject({ toolId: 'tool://notes/save', decision: 'refused' });
    expect(JSON.stringify(result.journal[0])).toContain('/copies');
    expect(received).toHaveLength(before);
    const events = await historyOf(h.client, workflowId);
    expect(scheduledActivities(events).filter((a) => a.type === 'performTool')).toEqual([]);
  });
});
