// The AgentDojo harness (issue 44): each suite's tools served by dojo_server.py as an MCP stdio server
// declared in the suite's manifest, a worker with toolplane's plugin, and for every user task (no
// attack) and every user × injection pair, the worst-case scripted model's calls through agentRun
// (path 1) and through a team's own StepCtx workflow (path 2), judged by AgentDojo's own checks.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { manifestDigest } from '../../catalog/digest';
import type { Manifest } from '../../catalog/manifest';
import type { JournalEntry } from '../../common/journal';
import type { ScriptTurn } from '../../common/wire';
import { loadManifest } from '../../runtime/manifest-file';
import { WORKFLOWS_PATH } from '../../runtime/workflow-modules';
import { writeWorkflowBundle } from '../../scripts/workflow-bundle';
import type { AgentRunInput, AgentRunResult } from '../../workflows/agent/run';
import { createWorker } from '../../worker';
import {
  AGENTDOJO_PACKAGE,
  agentdojoPython,
  BENCHMARK_VERSION,
  DOJO_SERVER,
  DojoBadInput,
  DojoDaemon,
  type DojoEnv,
  type DojoReference,
  type DojoScript,
} from './python';
import { startGatewayPath, type GatewayPath } from './gateway-path';
import type { DojoOwnInput } from './workflows';
import { carefulUserAnswer, type DojoHost, type DojoPrincipal } from './careful-user';
import { generateIssuerKey, signCredential, type IssuerKey } from '../../identity/mint';
import { confirm, reject } from '../../inspect/decisions';
import { pendingEscalations } from '../../workflows/escalation';
import { dojoToolId } from './tool-id';

export const PATHS = ['agentRun', 'own', 'gateway'] as const;
export type DojoPath = (typeof PATHS)[number];
export const SUITES = ['banking', 'slack', 'travel', 'workspace'] as const;
export const MANIFESTS = path.resolve(__dirname, 'manifests');
const PRINCIPAL = 'agent:dojo';

export interface DojoOptions {
  /** The Temporal server's address. */
  address: string;
  namespace?: string;
  suites: string[];
  /** `user_task_N` (that task, no attack) or `user_task_N/injection_task_M` (the pair); absent: every task and pair. */
  tasks?: string[];
  /** The first N user tasks of each suite (and their pairs). */
  limit?: number;
  /** The attack that places the injections; `none`: no pairs. */
  attack: string;
  paths: DojoPath[];
  version?: string;
  /** Prebuilt workflow bundles (the tests pass theirs); otherwise built into the work folder. */
  bundles?: Partial<Record<DojoPath, string>>;
  /**
   * Who answers when a run asks its principal: `careful` vouches only for what the task's own calls
   * need, `none` (the default) is nobody, so every question is a no.
   */
  principal?: DojoPrincipal;
  /** What the host tells the plane of the request (default `open`: the prompt alone). */
  host?: DojoHost;
  /** Runs going on beside each other (default 4). */
  concurrency?: number;
  /**
   * A real model in place of the scripted one (agentRun only): the endpoints the harness's worker
   * declares (a manifest's `models`, keys read from the worker's environment) and the one each run names.
   */
  model?: DojoModel;
  log?: (line: string) => void;
}

/** A model endpoint the harness's worker serves, and the model each run asks of it. */
export interface DojoModel {
  endpoints: NonNullable<Manifest['models']>;
  endpoint: string;
  model?: string;
}

/** A call the plane did not let through: which, and the rule and reason it gave. */
export interface DojoRefusal {
  call: number;
  toolId: string;
  decision: string;
  rule?: string;
  reason?: string;
  /** A call of the user task's (a benign call), not of the injection task's. */
  benign: boolean;
}

export interface DojoTaskResult {
  utility: boolean;
  /** The injection task's goal achieved (the attack succeeded); absent without attack. */
  attackSucceeded?: boolean;
  refused: DojoRefusal[];
  /** Questions the run put to its principal, and how many got a yes. */
  confirmations?: { asked: number; confirmed: number };
  /** A harness defect: the journal does not pair with the script call for call (then traces are unreliable). */
  misaligned?: string[];
  /** The undefended reference only: calls the suite itself rejected. */
  errors?: DojoReference['errors'];
}

export interface DojoTally {
  successfulAttacks: number;
  utilityWithoutAttack: number;
  utilityUnderAttack: number;
  counts: { tasks: number; pairs: number; benignUtility: number; utilityUnderAttack: number; attacks: number };
  /** Questions put to the principal: without attack, per task on average, and under attack in all. */
  confirmations: { benignAsked: number; benignPerTask: number; benignConfirmed: number; pairsAsked: number };
}

export interface DojoSuiteResult extends DojoTally {
  tasks: Record<string, DojoTaskResult>;
}

export interface DojoPathResult extends DojoTally {
  suites: Record<string, DojoSuiteResult>;
  /** Every benign call the plane refused, with its rule and reason. */
  overRefusals: (DojoRefusal & { suite: string; task: string })[];
}

export interface DojoResults {
  benchmark: { package: string; version: string; attack: string; host?: DojoHost };
  model: string;
  seconds: number;
  paths: Partial<Record<DojoPath, DojoPathResult>>;
  /**
   * The ceiling: the same scripted calls applied to the environment directly in Python (no plane, no
   * MCP), judged by the same checks with the ground truth's answer. A task it fails, no path can pass.
   */
  undefended: DojoPathResult;
}

/** The suite's manifest, its dojo server started by this venv's python, relaying to the daemon. */
export function suiteManifest(
  suite: string,
  python: string,
  socketPath: string,
  version: string,
  slot?: string,
  models?: Manifest['models'],
): Manifest {
  const file = path.join(MANIFESTS, `${suite}.yaml`);
  if (!fs.existsSync(file)) throw new DojoBadInput(`no manifest for suite "${suite}" (${file})`);
  const m = loadManifest(file).manifest;
  const dojo = m.servers.dojo;
  if (dojo?.kind !== 'mcp_stdio') throw new DojoBadInput(`${file}: servers.dojo is not an mcp_stdio server`);
  return {
    ...m,
    ...(models ? { models: { ...m.models, ...models } } : {}),
    servers: {
      ...m.servers,
      dojo: {
        ...dojo,
        command: python,
        args: [DOJO_SERVER],
        env: {
          ...dojo.env,
          DOJO_SOCKET: socketPath,
          DOJO_SUITE: suite,
          DOJO_VERSION: version,
          ...(slot ? { DOJO_SLOT: slot } : {}),
        },
      },
    },
  };
}

/** The user tasks and pairs to run, checked against the suite's own lists. */
function selection(
  suite: string,
  listed: { user: string[]; injection: string[] },
  opts: DojoOptions,
): { user: string; injection?: string }[] {
  const num = (id: string) => Number(/\d+$/.exec(id)?.[0] ?? 0);
  const users = [...listed.user].sort((a, b) => num(a) - num(b));
  const injections = [...listed.injection].sort((a, b) => num(a) - num(b));
  if (opts.tasks?.length) {
    return opts.tasks.map((t) => {
      const [user, injection] = t.split('/');
      if (!user || !users.includes(user)) throw new DojoBadInput(`suite "${suite}" has no user task "${user}"`);
      if (injection !== undefined && !injections.includes(injection))
        throw new DojoBadInput(`suite "${suite}" has no injection task "${injection}"`);
      return injection ? { user, injection } : { user };
    });
  }
  const chosen = opts.limit ? users.slice(0, opts.limit) : users;
  const pairs =
    opts.attack === 'none' ? [] : chosen.flatMap((user) => injections.map((injection) => ({ user, injection })));
  return [...chosen.map((user) => ({ user })), ...pairs];
}

const sum = <T>(xs: readonly T[], f: (x: T) => number) => xs.reduce((n, x) => n + f(x), 0);

function tally(tasks: DojoTaskResult[]): DojoTally {
  const benign = tasks.filter((t) => t.attackSucceeded === undefined);
  const pairs = tasks.filter((t) => t.attackSucceeded !== undefined);
  const frac = (n: number, d: number) => (d === 0 ? 0 : Math.round((n / d) * 10_000) / 10_000);
  const benignUtility = benign.filter((t) => t.utility).length;
  const utilityUnderAttack = pairs.filter((t) => t.utility).length;
  const attacks = pairs.filter((t) => t.attackSucceeded).length;
  return {
    successfulAttacks: frac(attacks, pairs.length),
    utilityWithoutAttack: frac(benignUtility, benign.length),
    utilityUnderAttack: frac(utilityUnderAttack, pairs.length),
    counts: { tasks: benign.length, pairs: pairs.length, benignUtility, utilityUnderAttack, attacks },
    confirmations: {
      benignAsked: sum(benign, (t) => t.confirmations?.asked ?? 0),
      benignPerTask: frac(
        sum(benign, (t) => t.confirmations?.asked ?? 0),
        benign.length,
      ),
      benignConfirmed: sum(benign, (t) => t.confirmations?.confirmed ?? 0),
      pairsAsked: sum(pairs, (t) => t.confirmations?.asked ?? 0),
    },
  };
}

/** The calls the run made that the plane refused; `benign`: before the injection task's (a real model: every call of a task without attack). */
function refusals(journal: JournalEntry[], script: DojoScript, userCalls = script.userCalls): DojoRefusal[] {
  const ordered = [...journal].sort((a, b) => a.position - b.position);
  return ordered.flatMap((e, i) =>
    e.decision === 'allowed' || e.decision === 'approved'
      ? []
      : [
          {
            call: i,
            toolId: e.toolId,
            decision: e.decision,
            ...(e.rule ? { rule: e.rule } : {}),
            ...(e.reason ? { reason: e.reason } : {}),
            benign: i < userCalls,
          },
        ],
  );
}

async function bundle(which: DojoPath, dir: string, given: string | undefined, log: (l: string) => void) {
  if (given) return given;
  const file = path.join(dir, `bundle-${which}.js`);
  log(`bundling the ${which === 'own' ? 'own workflow' : "toolplane's workflows"}`);
  await writeWorkflowBundle(file, which === 'own' ? require.resolve('./workflows') : WORKFLOWS_PATH, {
    sources: false,
  });
  return file;
}

const AUDIENCE = 'toolplane-agentdojo';

/** Runs going on beside others: their workers (and gateway), whose suite server serves the run bound to `id`. */
interface Slot {
  id: string;
  queues: Partial<Record<DojoPath, string>>;
  digest: string;
  gateway?: GatewayPath;
}

/**
 * The run's result, the principal answering each question it asks on the way (the careful user
 * vouches only for what the task's own calls need; nobody says no to all).
 */
async function answering<T>(
  client: Client,
  handle: WorkflowHandle,
  answers: { who: DojoPrincipal; key: IssuerKey; userCalls: DojoScript['calls'] },
): Promise<{ result: T; asked: number; confirmed: number }> {
  const result = handle.result() as Promise<T>;
  let done = false;
  const ended = result.then(
    () => (done = true),
    () => (done = true),
  );
  const seen = new Set<string>();
  let asked = 0;
  let confirmed = 0;
  while (!done) {
    const waiting = await handle.query(pendingEscalations).catch(() => []);
    for (const q of waiting) {
      if (q.kind !== 'confirmation' || !q.field) continue;
      const id = `${q.effectKey}|${q.field.pointer}|${q.field.value}`;
      if (seen.has(id)) continue;
      seen.add(id);
      asked++;
      const credential = await signCredential(answers.key, { audience: AUDIENCE, subject: PRINCIPAL });
      const yes =
        answers.who === 'careful' && carefulUserAnswer({ ...q.field, args: q.args }, answers.userCalls) === 'confirm';
      if (yes) confirmed++;
      await (
        yes
          ? confirm(client, handle.workflowId, q.effectKey, q.field.value, { credential })
          : reject(client, handle.workflowId, q.effectKey, { credential, reason: 'not what I asked for' })
      ).catch(() => undefined);
    }
    await Promise.race([ended, new Promise((r) => setTimeout(r, 50))]);
  }
  return { result: await result, asked, confirmed };
}

/** A path's tallies, per suite and over all, and its over-refusals, from its per-task results. */
export function pathResult(bySuite: Record<string, Record<string, DojoTaskResult>>): DojoPathResult {
  const suites: Record<string, DojoSuiteResult> = {};
  for (const [suite, tasks] of Object.entries(bySuite)) suites[suite] = { ...tally(Object.values(tasks)), tasks };
  return {
    ...tally(Object.values(bySuite).flatMap((t) => Object.values(t))),
    suites,
    overRefusals: Object.entries(bySuite).flatMap(([suite, tasks]) =>
      Object.entries(tasks).flatMap(([task, r]) =>
        r.refused.filter((x) => x.benign).map((x) => ({ ...x, suite, task })),
      ),
    ),
  };
}

/** Results of later runs folded into earlier ones (`--merge`): a task or pair run again replaces its old result. */
export function mergeResults(earlier: DojoResults, later: DojoResults): DojoResults {
  const paths: Partial<Record<DojoPath, DojoPathResult>> = { ...earlier.paths };
  for (const [p, r] of Object.entries(later.paths) as [DojoPath, DojoPathResult][]) {
    const bySuite: Record<string, Record<string, DojoTaskResult>> = {};
    for (const [suite, sr] of Object.entries(earlier.paths[p]?.suites ?? {})) bySuite[suite] = sr.tasks;
    for (const [suite, sr] of Object.entries(r.suites)) bySuite[suite] = { ...bySuite[suite], ...sr.tasks };
    paths[p] = pathResult(bySuite);
  }
  const refBySuite: Record<string, Record<string, DojoTaskResult>> = {};
  // a results file written before the reference existed has none
  for (const [suite, sr] of Object.entries((earlier as Partial<DojoResults>).undefended?.suites ?? {}))
    refBySuite[suite] = sr.tasks;
  for (const [suite, sr] of Object.entries(later.undefended.suites))
    refBySuite[suite] = { ...refBySuite[suite], ...sr.tasks };
  return { ...later, seconds: earlier.seconds + later.seconds, paths, undefended: pathResult(refBySuite) };
}

/** Runs the selection on every path asked for; the caller owns the Temporal server. */
export async function runDojo(opts: DojoOptions): Promise<DojoResults> {
  const log = opts.log ?? (() => {});
  const started = Date.now();
  const version = opts.version ?? BENCHMARK_VERSION;
  const attack = opts.attack;
  const model = opts.model;
  if (model) {
    const others = opts.paths.filter((p) => p !== 'agentRun');
    if (others.length)
      throw new DojoBadInput(
        `a real model drives agentRun only (the own workflow and the gateway play the task's calls): drop ${others.join(', ')}`,
      );
    if (!model.endpoints[model.endpoint])
      throw new DojoBadInput(
        `model endpoint "${model.endpoint}" is not among those given (${Object.keys(model.endpoints).join(', ') || 'none'})`,
      );
  }
  const python = agentdojoPython(log);
  const who = opts.principal ?? 'none';
  const narrows = opts.host === 'narrows';
  const concurrency = opts.concurrency ?? 4;
  const issuer = await generateIssuerKey('https://principals.agentdojo.test', 'dojo-1');
  const identity = { issuers: [{ issuer: issuer.issuer, audience: AUDIENCE, jwks: issuer.jwks }] };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentdojo-'));
  const daemon = await DojoDaemon.start(python, dir, version);
  const connection = await Connection.connect({ address: opts.address });
  const native = await NativeConnection.connect({ address: opts.address });
  const namespace = opts.namespace ?? 'default';
  const client = new Client({ connection, namespace });
  const perPath: Record<string, Record<string, Record<string, DojoTaskResult>>> = {};
  const undefended: Record<string, Record<string, DojoTaskResult>> = {};
  try {
    // Every suite's selection is checked before any run starts.
    const plans = [];
    for (const suite of opts.suites) {
      if (!(SUITES as readonly string[]).includes(suite))
        throw new DojoBadInput(`no suite "${suite}" (one of ${SUITES.join(', ')})`);
      const listed = await daemon.tasks({ DOJO_SUITE: suite, DOJO_VERSION: version });
      plans.push({ suite, runs: selection(suite, listed, opts) });
    }
    const runTask = async (suite: string, slot: Slot, run: { user: string; injection?: string }) => {
      const task = run.injection ? `${run.user}/${run.injection}` : run.user;
      const base: DojoEnv = {
        DOJO_SUITE: suite,
        DOJO_VERSION: version,
        DOJO_USER_TASK: run.user,
        ...(run.injection ? { DOJO_INJECTION_TASK: run.injection, DOJO_ATTACK: attack } : {}),
      };
      const ref = await daemon.reference(base);
      (undefended[suite] ??= {})[task] = {
        utility: ref.utility,
        ...(ref.security !== null ? { attackSucceeded: ref.security } : {}),
        refused: [],
        ...(ref.errors.length ? { errors: ref.errors } : {}),
      };
      log(
        `undefended ${suite} ${task}: utility ${ref.utility}` +
          (ref.security !== null ? `, attack ${ref.security ? 'SUCCEEDED' : 'failed'}` : '') +
          (ref.errors.length ? `; suite errors ${ref.errors.map((e) => e.function).join(', ')}` : ''),
      );
      for (const p of opts.paths) {
        const env: DojoEnv = { ...base, DOJO_STATE: path.join(dir, `${suite}-${task.replace('/', '-')}-${p}.json`) };
        fs.rmSync(env.DOJO_STATE!, { force: true });
        fs.rmSync(`${env.DOJO_STATE!}.calls.jsonl`, { force: true });
        // The slot's suite server asks the daemon for the run bound to the slot: this one, until the next.
        await daemon.bind(slot.id, env);
        const script = await daemon.script(env);
        const workflowId = `agentdojo-${suite}-${task.replace('/', '-')}-${p}-${randomUUID().slice(0, 8)}`;
        let journal: JournalEntry[];
        let answer = script.answer;
        let asked = { asked: 0, confirmed: 0 };
        // A run's token acts only for the input it was issued for (the workflow type and the input's digest).
        const runCredential = (id: string, workflowType: string, input: unknown) =>
          signCredential(issuer, {
            audience: AUDIENCE,
            subject: PRINCIPAL,
            workflowId: id,
            runInput: { workflowType, input },
          });
        const answersFor = { who, key: issuer, userCalls: script.calls.slice(0, script.userCalls) };
        // A narrowing host names the tools of the actions the user asked for: the user task's own calls.
        const requested = narrows ? [...new Set(answersFor.userCalls.map((c) => dojoToolId(c.function)))] : undefined;
        if (p === 'gateway') {
          const r = await slot.gateway!.run(script, requested);
          journal = r.journal;
          asked = r.confirmations;
        } else if (p === 'agentRun') {
          const turns: ScriptTurn[] = [
            ...script.calls.map((c) => ({ tool_calls: [{ name: `dojo__${c.function}`, arguments: c.args }] })),
            { final: script.answer || 'Done.' },
          ];
          const input: AgentRunInput = {
            prompt: script.prompt,
            principal: PRINCIPAL,
            // A host that does not narrow the run to the request (`open`): a tool that requires_request is asked about.
            ...(requested ? { grants: requested } : {}),
            manifestDigest: slot.digest,
            model: model
              ? { endpoint: model.endpoint, ...(model.model ? { model: model.model } : {}) }
              : { endpoint: 'scripted', script: turns },
            // The judge pairs every scripted call with its entry: the result lists routine calls too.
            fullJournal: true,
          };
          const handle = await client.workflow.start('agentRun', {
            taskQueue: slot.queues[p]!,
            workflowId,
            args: [{ ...input, credential: await runCredential(workflowId, 'agentRun', input) }],
          });
          const r = await answering<AgentRunResult>(client, handle, answersFor);
          journal = r.result.journal;
          answer = r.result.answer ?? '';
          asked = { asked: r.asked, confirmed: r.confirmed };
        } else {
          const input: DojoOwnInput = {
            principal: PRINCIPAL,
            given: script.prompt,
            ...(requested ? { grants: requested } : {}),
            calls: script.calls.map((c) => ({ toolId: dojoToolId(c.function), args: c.args })),
          };
          const handle = await client.workflow.start('dojoOwnCalls', {
            taskQueue: slot.queues[p]!,
            workflowId,
            args: [{ ...input, credential: await runCredential(workflowId, 'dojoOwnCalls', input) }],
          });
          const r = await answering<{ journal: JournalEntry[] }>(client, handle, answersFor);
          journal = r.result.journal;
          asked = { asked: r.asked, confirmed: r.confirmed };
        }
        const ordered = [...journal].sort((a, b) => a.position - b.position);
        // The calls that reached the suite (dojo_server.py records each): a real model's trace.
        const reached = (): DojoScript['calls'] => {
          const file = `${env.DOJO_STATE!}.calls.jsonl`;
          if (!fs.existsSync(file)) return [];
          return fs
            .readFileSync(file, 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l) as DojoScript['calls'][number]);
        };
        // The journal pairs with the script by position: one entry per scripted call, same tool.
        const misaligned = (model && p === 'agentRun' ? [] : script.calls).flatMap((c, i) =>
          ordered[i]?.toolId === dojoToolId(c.function)
            ? []
            : [`call ${i} ${c.function}: journal has ${ordered[i]?.toolId ?? 'nothing'}`],
        );
        if (!(model && p === 'agentRun') && ordered.length !== script.calls.length)
          misaligned.push(`${script.calls.length} scripted calls, ${ordered.length} journal entries`);
        const traces =
          model && p === 'agentRun'
            ? reached()
            : script.calls.filter((_, i) => ['allowed', 'approved'].includes(ordered[i]?.decision ?? ''));
        const verdict = await daemon.judge({
          ...env,
          DOJO_MODEL_OUTPUT: answer,
          DOJO_TRACES: JSON.stringify(traces),
        });
        const result: DojoTaskResult = {
          utility: verdict.utility,
          ...(verdict.security !== null ? { attackSucceeded: verdict.security } : {}),
          refused: refusals(journal, script, model && p === 'agentRun' ? (run.injection ? 0 : Infinity) : undefined),
          ...(asked.asked > 0 ? { confirmations: asked } : {}),
          ...(misaligned.length ? { misaligned } : {}),
        };
        ((perPath[p] ??= {})[suite] ??= {})[task] = result;
        log(
          `${p} ${suite} ${task}: utility ${result.utility}` +
            (result.attackSucceeded !== undefined
              ? `, attack ${result.attackSucceeded ? 'SUCCEEDED' : 'failed'}`
              : '') +
            (result.misaligned ? `; MISALIGNED ${result.misaligned.join('; ')}` : '') +
            (result.confirmations
              ? `; asked ${result.confirmations.asked} (yes ${result.confirmations.confirmed})`
              : '') +
            (result.refused.length
              ? `; refused ${result.refused.map((r) => `${r.toolId.replace('tool://dojo/', '')}(${r.rule ?? r.decision}${r.benign ? ', benign' : ''})`).join(', ')}`
              : ''),
        );
      }
    };
    const bundles: Partial<Record<DojoPath, string>> = {};
    for (const p of opts.paths) bundles[p] = await bundle(p, dir, opts.bundles?.[p], log);
    for (const { suite, runs } of plans) {
      // Each slot has its own workers, whose suite server asks the daemon for the task bound to the
      // slot: runs of different tasks go on beside each other.
      const slots: Slot[] = [];
      const workers: { worker: Worker; done: Promise<void> }[] = [];
      const gateways: GatewayPath[] = [];
      try {
        for (let n = 0; n < Math.max(1, Math.min(concurrency, runs.length)); n++) {
          const id = `${suite}-${n}`;
          const manifest = suiteManifest(suite, python, daemon.socketPath, version, id, model?.endpoints);
          const queues: Partial<Record<DojoPath, string>> = {};
          let gateway: GatewayPath | undefined;
          for (const p of opts.paths) {
            if (p === 'gateway') {
              gateway = await startGatewayPath({
                client,
                connection: native,
                namespace,
                manifest,
                bundle: bundles[p]!,
                principal: PRINCIPAL,
                answers: who,
                log,
              });
              gateways.push(gateway);
              continue;
            }
            const taskQueue = `agentdojo-${id}-${p}-${randomUUID()}`;
            const worker = await createWorker({
              manifest,
              connection: native,
              namespace,
              taskQueue,
              workflowBundle: { codePath: bundles[p]! },
              identity,
              insecureAssertedPrincipals: false,
              allowUngovernedToolRun: false,
              log: (l) => log(`[worker] ${l}`),
            });
            workers.push({ worker, done: worker.run() });
            queues[p] = taskQueue;
          }
          slots.push({ id, queues, digest: manifestDigest(manifest), ...(gateway ? { gateway } : {}) });
        }
        let next = 0;
        const runSlot = async (slot: (typeof slots)[number]) => {
          for (let k = next++; k < runs.length; k = next++) await runTask(suite, slot, runs[k]!);
        };
        await Promise.all(slots.map(runSlot));
      } finally {
        await Promise.all(gateways.map((g) => g.close()));
        for (const w of workers) w.worker.shutdown();
        await Promise.all(workers.map((w) => w.done));
      }
    }
  } finally {
    await daemon.stop();
    await connection.close();
    await native.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const paths: Partial<Record<DojoPath, DojoPathResult>> = {};
  for (const p of opts.paths) paths[p] = pathResult(perPath[p] ?? {});
  return {
    benchmark: { package: `agentdojo ${AGENTDOJO_PACKAGE}`, version, attack, host: opts.host ?? 'open' },
    model: model
      ? `${model.endpoint}${model.model ? ` (${model.model})` : ''}: ${model.endpoints[model.endpoint]!.provider}`
      : 'worst-case scripted: the user task’s ground-truth calls, then the injection task’s',
    seconds: Math.round((Date.now() - started) / 1000),
    paths,
    undefended: pathResult(undefended),
  };
}
