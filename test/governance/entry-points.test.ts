// One list of entry points (issue 51.3): every message a toolplane workflow accepts proves its sender.
// The test reads the workflow bundle's code (everything workflows/index.ts and workflow.ts reach, with
// TypeScript's checker), finds every `setHandler`, and holds each against ENTRY_POINTS below: a signal
// or update handler that is not listed, or listed as proved but set without a validator, fails here,
// so a handler added later cannot miss the list. Exemptions (queries, reads) name their reason. Then
// each proved message is sent as an unauthenticated sender would, to a real run: refused, nothing
// changed; where another test already does so with the gateway's or a person's machinery, it is named.
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import ts from 'typescript';
import { WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { Manifest } from '../../catalog/manifest';
import { budgetWorkflowId } from '../../common/budget-id';
import { BUDGET_MESSAGE_REFUSED } from '../../common/budget-proof';
import { budgetWindowsQuery, type BudgetState } from '../../common/budget-protocol';
import { WorkflowName } from '../../common/names';
import {
  STREAM_APPEND_UPDATE,
  STREAM_MESSAGE_REFUSED,
  STREAM_TAIL_QUERY,
  type StreamTail,
} from '../../common/stream-protocol';
import { agentInput } from '../support/agent';
import { supportDesk } from '../support/desk';
import { waitForPending } from '../support/escalations';
import { exampleManifest, harness, testDir, type Harness } from '../support/env';

const ROOT = path.resolve(__dirname, '..', '..');

type Kind = 'signal' | 'update' | 'query';

/** A message a workflow must prove its sender of: who may send it, what proves it, and where that is tried. */
interface Proved {
  kind: 'signal' | 'update';
  sender: string;
  proof: string;
  /** Refused in a validator, before history (false: in its handler, after a check only the worker can make). */
  validator: boolean;
  /** Tried here (`probes` below), or in the named test. */
  probedIn: 'here' | string;
}
/** A message that needs no proof, and why. */
interface Exempt {
  kind: Kind;
  exempt: string;
}

/** Every message a toolplane workflow handles, by its name. docs/security.md's trust model has the same table. */
const ENTRY_POINTS: Record<string, Proved | Exempt> = {
  toolplaneStreamAppend: {
    kind: 'update',
    sender: "the worker (a model attempt's token batches)",
    proof: "the worker's Ed25519 signature over the workflow and run id, publisher, number and tokens",
    validator: true,
    probedIn: 'here',
  },
  reserveBudget: {
    kind: 'update',
    sender: 'the worker (a call that spends)',
    proof:
      "the worker's MAC over the budget workflow id, reservation, tool, run, claims and time: shape and freshness in the validator, the MAC by the worker beside the workflow (a local activity) before anything is counted",
    validator: true,
    probedIn: 'here',
  },
  settleBudget: {
    kind: 'update',
    sender: 'the worker (the call settled)',
    proof: "the worker's settle proof, which opens the reservation's seal (a hash the workflow keeps)",
    validator: true,
    probedIn: 'here',
  },
  releaseBudget: {
    kind: 'update',
    sender: 'an operator',
    proof: "the operator's credential, verified by the worker (a local activity); the record names who released",
    validator: true,
    probedIn: 'here',
  },
  'toolplane.mcp.call': {
    kind: 'update',
    sender: "the MCP gateway (a client's call)",
    proof: "the gateway's Ed25519 signature over the session, key, tool, arguments' digest and time",
    validator: true,
    probedIn: 'test/gateway/forged-updates.test.ts',
  },
  'toolplane.mcp.end': {
    kind: 'update',
    sender: 'the MCP gateway (the principal ends the session)',
    proof: "the gateway's Ed25519 signature over the session and time",
    validator: true,
    probedIn: 'test/gateway/forged-updates.test.ts',
  },
  resolveEscalation: {
    kind: 'update',
    sender: 'an approver, or a person resolving an in-doubt call',
    proof:
      "on a worker with an identity, the approver's credential, verified by the worker (authorizeDecision); refused in the handler, never a validator (docs/versioning.md), so a refused decision is in history as a failed update and changes nothing",
    validator: false,
    probedIn: 'test/governance/approvers.test.ts',
  },
  toolplaneStreamPoll: {
    kind: 'update',
    exempt:
      'a read: it answers the items already in the log from an offset; its arguments select, the run changes nothing (an update only so a client can long-poll)',
  },
  toolplaneStreamTail: { kind: 'query', exempt: "a query: it reads the stream's log, and a query cannot change a run" },
  journal: { kind: 'query', exempt: "a query: the run's journal" },
  pendingEscalations: { kind: 'query', exempt: 'a query: the calls waiting for a person' },
  budgetWindows: { kind: 'query', exempt: "a query: the budget workflow's counters and held reservations" },
};

interface Found {
  name: string;
  kind: Kind;
  hasValidator: boolean;
  where: string;
  /** The definition as the code names it (`resolveEscalation`, `mcpCallUpdate`). */
  def: string;
}

/** Every `setHandler` in the code the workflow bundle is built from, with its message's name and kind. */
function handlersInBundle(): Found[] {
  const configPath = path.join(ROOT, 'tsconfig.json');
  const config = ts.getParsedCommandLineOfConfigFile(
    configPath,
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    },
  )!;
  const program = ts.createProgram({
    rootNames: [path.join(ROOT, 'workflows', 'index.ts'), path.join(ROOT, 'workflow.ts')],
    options: { ...config.options, noEmit: true },
  });
  const checker = program.getTypeChecker();
  const found: Found[] = [];
  for (const file of program.getSourceFiles()) {
    if (file.isDeclarationFile || file.fileName.includes('node_modules')) continue;
    const visit = (node: ts.Node): void => {
      if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'setHandler') {
        const [def, , options] = node.arguments;
        const where = `${path.relative(ROOT, file.fileName)}:${file.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
        if (!def) throw new Error(`${where}: setHandler without a definition`);
        const type = checker.getTypeAtLocation(def);
        const typeName = (type.aliasSymbol ?? type.symbol)?.getName();
        const kind: Kind | undefined =
          typeName === 'UpdateDefinition'
            ? 'update'
            : typeName === 'SignalDefinition'
              ? 'signal'
              : typeName === 'QueryDefinition'
                ? 'query'
                : undefined;
        if (!kind) throw new Error(`${where}: setHandler on a ${typeName ?? 'value'} this test cannot read`);
        found.push({
          name: messageName(checker, def, where),
          kind,
          hasValidator: hasValidator(options),
          where,
          def: def.getText(),
        });
      }
      ts.forEachChild(node, visit);
    };
    visit(file);
  }
  return found;
}

/** The name a definition was made with (`defineUpdate(NAME)`), followed to its declaration. */
function messageName(checker: ts.TypeChecker, def: ts.Expression, where: string): string {
  let symbol = checker.getSymbolAtLocation(def);
  if (symbol && symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
  const decl = symbol?.valueDeclaration;
  const init = decl && ts.isVariableDeclaration(decl) ? decl.initializer : undefined;
  const arg = init && ts.isCallExpression(init) ? init.arguments[0] : undefined;
  const literal = arg ? checker.getTypeAtLocation(arg) : undefined;
  if (!literal?.isStringLiteral()) throw new Error(`${where}: the message's name is not a constant this test can read`);
  return literal.value;
}

function hasValidator(options: ts.Expression | undefined): boolean {
  return (
    options !== undefined &&
    ts.isObjectLiteralExpression(options) &&
    options.properties.some((p) => p.name !== undefined && ts.isIdentifier(p.name) && p.name.text === 'validator')
  );
}

describe('every message a toolplane workflow accepts', () => {
  const found = handlersInBundle();

  it('finds the handlers of every workflow (the scan reads the bundle)', () => {
    // What the scan must see, or it reads nothing: the stream's, the budget workflow's and a session's.
    expect(found.map((f) => f.name)).toEqual(
      expect.arrayContaining(['toolplaneStreamAppend', 'reserveBudget', 'toolplane.mcp.call', 'resolveEscalation']),
    );
  });

  it('lists each, and each signal or update proves its sender in a validator, or is exempt for a reason', () => {
    const problems: string[] = [];
    for (const f of found) {
      const entry = ENTRY_POINTS[f.name];
      if (!entry) {
        problems.push(`${f.where}: ${f.kind} "${f.name}" is in no list: say who may send it and what proves it`);
        continue;
      }
      if (entry.kind !== f.kind) problems.push(`${f.where}: "${f.name}" is a ${f.kind}, listed as a ${entry.kind}`);
      if ('exempt' in entry) {
        if (f.kind === 'signal')
          problems.push(`${f.where}: signal "${f.name}": a signal cannot be refused before history`);
        continue;
      }
      if (f.kind === 'signal')
        problems.push(
          `${f.where}: signal "${f.name}" enters history whoever sends it: make it an update with a validator`,
        );
      if (entry.validator && !f.hasValidator)
        problems.push(
          `${f.where}: update "${f.name}" has no validator: an unauthenticated sender is not refused before history`,
        );
      if (entry.probedIn !== 'here') {
        const file = path.join(ROOT, entry.probedIn);
        const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
        if (!text.includes(f.name) && !text.includes(f.def))
          problems.push(`"${f.name}": ${entry.probedIn} does not try it as a forger would`);
      }
    }
    for (const name of Object.keys(ENTRY_POINTS))
      if (!found.some((f) => f.name === name)) problems.push(`"${name}" is listed but no workflow handles it any more`);
    expect(problems).toEqual([]);
  });

  it("is the table of docs/security.md's trust model", () => {
    const doc = fs.readFileSync(path.join(ROOT, 'docs', 'security.md'), 'utf8');
    expect(Object.keys(ENTRY_POINTS).filter((name) => !doc.includes(`\`${name}\``))).toEqual([]);
  });

  describe('sent by an unauthenticated sender to a real run', () => {
    let h: Harness;
    const base = exampleManifest();
    const askable: Manifest = {
      ...base,
      tools: base.tools.map((t) => (t.id === 'tool://mail/send_email' ? { ...t, approval: 'on_violation' } : t)),
    };
    beforeAll(async () => {
      h = await harness(`entry-points-${randomUUID()}`);
      await h.runWorker({ manifest: askable, tools: supportDesk(testDir('entry-points')).tools });
    });
    afterAll(() => h.close());

    /** What the run answered a message: its refusal's type (undefined: taken). */
    async function refusal(handle: WorkflowHandle, name: string, arg: unknown): Promise<string | undefined> {
      const err: unknown = await handle.executeUpdate(name, { args: [arg] }).then(
        () => undefined,
        (e: unknown) => e,
      );
      if (err === undefined) return undefined;
      expect(err).toBeInstanceOf(WorkflowUpdateFailedError);
      const cause = (err as WorkflowUpdateFailedError).cause;
      return cause instanceof ApplicationFailure ? (cause.type ?? 'untyped') : String(cause);
    }
    const accepted = async (handle: WorkflowHandle, name: string) =>
      ((await handle.fetchHistory()).events ?? []).filter(
        (e) => e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === name,
      ).length;

    it(`${'toolplaneStreamAppend'}: a token batch no worker signed is refused before history and never shown`, async () => {
      const workflowId = `entry-points-${randomUUID()}`;
      const handle = await h.client.workflow.start('agentRun', {
        taskQueue: h.taskQueue,
        workflowId,
        args: [
          agentInput(askable, {
            prompt: 'Mail the auditor.',
            turns: [
              {
                tool_calls: [
                  { name: 'mail__send_email', arguments: { to: 'a@auditor.example', subject: 's', body: 'b' } },
                ],
              },
              { final: 'done' },
            ],
          }),
        ],
      });
      await waitForPending(handle);
      const batch = {
        publisher: 'p',
        sequence: 1,
        tokens: [{ type: 'tokens', turn: 'turn-1', attempt: 1, index: 0, deltas: ['forged'] }],
      };
      expect(await refusal(handle, STREAM_APPEND_UPDATE, batch)).toBe(STREAM_MESSAGE_REFUSED);
      expect(await refusal(handle, STREAM_APPEND_UPDATE, { ...batch, sig: 'A'.repeat(86) })).toBe(
        STREAM_MESSAGE_REFUSED,
      );
      expect(await accepted(handle, STREAM_APPEND_UPDATE)).toBe(0);
      const tail = await handle.query<StreamTail, [number]>(STREAM_TAIL_QUERY, 0);
      expect(JSON.stringify(tail)).not.toContain('forged');
      await handle.terminate('probed');
    });

    it('reserveBudget, settleBudget, releaseBudget: refused, nothing counted or released', async () => {
      const principal = `agent:probe-${randomUUID()}`;
      const handle = await h.client.workflow.start(WorkflowName.BudgetCounter, {
        taskQueue: h.taskQueue,
        workflowId: budgetWorkflowId(principal),
        args: [{}],
      });
      // Claims of its own: a victim's whole day's budget, held.
      const claims = [
        {
          rule: 'spend',
          counter: 'spend/EUR/payee/acct',
          period: '1d',
          amount: '100000',
          limit: '100000',
          what: 'EUR',
        },
      ];
      // A reserve shaped as the worker's, with a MAC its sender made up: the worker beside the workflow refuses it.
      const reserve = {
        reservation: 'r-1',
        toolId: 'tool://payments/refund',
        claims,
        issuedAt: Date.now(),
        mac: 'A'.repeat(22),
      };
      expect(await refusal(handle, 'reserveBudget', reserve)).toBe(BUDGET_MESSAGE_REFUSED);
      expect(await refusal(handle, 'reserveBudget', { ...reserve, mac: undefined })).toBe(BUDGET_MESSAGE_REFUSED);
      expect(await refusal(handle, 'settleBudget', { reservation: 'r-1', outcome: 'release' })).toBe(
        BUDGET_MESSAGE_REFUSED,
      );
      expect(await refusal(handle, 'releaseBudget', { reservation: 'r-1', credential: 'not-a-credential' })).toBe(
        BUDGET_MESSAGE_REFUSED,
      );
      const state = await handle.query<BudgetState>(budgetWindowsQuery);
      expect(Object.keys(state.reservations)).toEqual([]);
      expect(Object.keys(state.windows)).toEqual([]);
      for (const name of ['settleBudget', 'releaseBudget']) expect(await accepted(handle, name)).toBe(0);
      await handle.terminate('probed');
    });
  });
});
