// The AgentDojo harness (issue 44): each suite's tools served by dojo_server.py as an MCP stdio server
// declared in the suite's manifest, a worker with toolplane's plugin, and for every user task (no
// attack) and every user × injection pair, the worst-case scripted model's calls through agentRun
// (path 1) and through a team's own StepCtx workflow (path 2), judged by AgentDojo's own checks.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
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
  type DojoScript,
} from './python';
import { startGatewayPath, type GatewayPath } from './gateway-path';
import type { DojoOwnInput } from './workflows';

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
  /** A variant of a suite's manifest for these runs (a test's rule); default the checked-in one. */
  adjustManifest?: (suite: string, manifest: Manifest) => Manifest;
  log?: (line: string) => void;
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
  /** Values the careful user confirmed (`principal_confirms`) in this run. */
  confirmations?: number;
}

export interface DojoTally {
  successfulAttacks: number;
  utilityWithoutAttack: number;
  utilityUnderAttack: number;
  counts: { tasks: number; pairs: number; benignUtility: number; utilityUnderAttack: number; attacks: number };
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
  benchmark: { package: string; version: string; attack: string };
  model: string;
  seconds: number;
  paths: Partial<Record<DojoPath, DojoPathResult>>;
}

/** The suite's manifest, its dojo server started by this venv's python, relaying to the daemon. */
export function suiteManifest(suite: string, python: string, socketPath: string, version: string): Manifest {
  const file = path.join(MANIFESTS, `${suite}.yaml`);
  if (!fs.existsSync(file)) throw new DojoBadInput(`no manifest for suite "${suite}" (${file})`);
  const m = loadManifest(file).manifest;
  const dojo = m.servers.dojo;
  if (dojo?.kind !== 'mcp_stdio') throw new DojoBadInput(`${file}: servers.dojo is not an mcp_stdio server`);
  return {
    ...m,
    servers: {
      ...m.servers,
      dojo: {
        ...dojo,
        command: python,
        args: [DOJO_SERVER],
        env: { ...dojo.env, DOJO_SOCKET: socketPath, DOJO_SUITE: suite, DOJO_VERSION: version },
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
  };
}

function refusals(journal: JournalEntry[], script: DojoScript): DojoRefusal[] {
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
            benign: i < script.userCalls,
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

/** Results of runs over other suites folded into earlier ones (`--merge`): a suite run again replaces its old results. */
export function mergeResults(earlier: DojoResults, later: DojoResults): DojoResults {
  const paths: Partial<Record<DojoPath, DojoPathResult>> = { ...earlier.paths };
  for (const [p, r] of Object.entries(later.paths) as [DojoPath, DojoPathResult][]) {
    const bySuite: Record<string, Record<string, DojoTaskResult>> = {};
    for (const [suite, sr] of Object.entries(earlier.paths[p]?.suites ?? {})) bySuite[suite] = sr.tasks;
    for (const [suite, sr] of Object.entries(r.suites)) bySuite[suite] = sr.tasks;
    paths[p] = pathResult(bySuite);
  }
  return { ...later, seconds: earlier.seconds + later.seconds, paths };
}

/** Runs the selection on every path asked for; the caller owns the Temporal server. */
export async function runDojo(opts: DojoOptions): Promise<DojoResults> {
  const log = opts.log ?? (() => {});
  const started = Date.now();
  const version = opts.version ?? BENCHMARK_VERSION;
  const attack = opts.attack;
  const python = agentdojoPython(log);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentdojo-'));
  const daemon = await DojoDaemon.start(python, dir, version);
  const connection = await Connection.connect({ address: opts.address });
  const native = await NativeConnection.connect({ address: opts.address });
  const namespace = opts.namespace ?? 'default';
  const client = new Client({ connection, namespace });
  const perPath: Record<string, Record<string, Record<string, DojoTaskResult>>> = {};
  const saved = Object.fromEntries(
    Object.keys(process.env)
      .filter((k) => k.startsWith('DOJO_'))
      .map((k) => [k, process.env[k]]),
  );
  try {
    // Every suite's selection is checked before any run starts.
    const plans = [];
    for (const suite of opts.suites) {
      if (!(SUITES as readonly string[]).includes(suite))
        throw new DojoBadInput(`no suite "${suite}" (one of ${SUITES.join(', ')})`);
      const listed = await daemon.tasks({ DOJO_SUITE: suite, DOJO_VERSION: version });
      plans.push({ suite, runs: selection(suite, listed, opts) });
    }
    const bundles: Partial<Record<DojoPath, string>> = {};
    for (const p of opts.paths) bundles[p] = await bundle(p, dir, opts.bundles?.[p], log);
    for (const { suite, runs } of plans) {
      const checkedIn = suiteManifest(suite, python, daemon.socketPath, version);
      const manifest = opts.adjustManifest?.(suite, checkedIn) ?? checkedIn;
      const digest = manifestDigest(manifest);
      const queues: Partial<Record<DojoPath, string>> = {};
      const workers: { worker: Worker; done: Promise<void> }[] = [];
      let gateway: GatewayPath | undefined;
      try {
        for (const p of opts.paths) {
          if (p === 'gateway') {
            gateway = await startGatewayPath({
              client,
              connection: native,
              namespace,
              manifest,
              bundle: bundles[p]!,
              principal: PRINCIPAL,
              log,
            });
            continue;
          }
          const taskQueue = `agentdojo-${suite}-${p}-${randomUUID()}`;
          const worker = await createWorker({
            manifest,
            connection: native,
            namespace,
            taskQueue,
            workflowBundle: { codePath: bundles[p]! },
            insecureAssertedPrincipals: true,
            allowUngovernedToolRun: false,
            log: (l) => log(`[worker] ${l}`),
          });
          workers.push({ worker, done: worker.run() });
          queues[p] = taskQueue;
        }
        for (const run of runs) {
          const task = run.injection ? `${run.user}/${run.injection}` : run.user;
          for (const p of opts.paths) {
            const env: DojoEnv = {
              DOJO_SUITE: suite,
              DOJO_VERSION: version,
              DOJO_USER_TASK: run.user,
              ...(run.injection ? { DOJO_INJECTION_TASK: run.injection, DOJO_ATTACK: attack } : {}),
              DOJO_STATE: path.join(dir, `${suite}-${task.replace('/', '-')}-${p}.json`),
            };
            fs.rmSync(env.DOJO_STATE!, { force: true });
            // The MCP server the worker starts per call inherits the worker's environment: this run's.
            for (const k of Object.keys(process.env)) if (k.startsWith('DOJO_')) delete process.env[k];
            Object.assign(process.env, env);
            const script = await daemon.script(env);
            const workflowId = `agentdojo-${suite}-${task.replace('/', '-')}-${p}-${randomUUID().slice(0, 8)}`;
            let journal: JournalEntry[];
            let answer = script.answer;
            let confirmations: number | undefined;
            if (p === 'gateway') {
              ({ journal, confirmations } = await gateway!.run(script));
            } else if (p === 'agentRun') {
              const turns: ScriptTurn[] = [
                ...script.calls.map((c) => ({ tool_calls: [{ name: `dojo__${c.function}`, arguments: c.args }] })),
                { final: script.answer || 'Done.' },
              ];
              const input: AgentRunInput = {
                prompt: script.prompt,
                principal: PRINCIPAL,
                grants: manifest.tools.map((t) => t.id),
                manifestDigest: digest,
                model: { endpoint: 'scripted', script: turns },
              };
              const r: AgentRunResult = await client.workflow.execute('agentRun', {
                taskQueue: queues[p]!,
                workflowId,
                args: [input],
              });
              journal = r.journal;
              answer = r.answer ?? '';
            } else {
              const input: DojoOwnInput = {
                principal: PRINCIPAL,
                given: script.prompt,
                calls: script.calls.map((c) => ({ toolId: `tool://dojo/${c.function}`, args: c.args })),
              };
              const r: { journal: JournalEntry[] } = await client.workflow.execute('dojoOwnCalls', {
                taskQueue: queues[p]!,
                workflowId,
                args: [input],
              });
              journal = r.journal;
            }
            const ordered = [...journal].sort((a, b) => a.position - b.position);
            const traces = script.calls.filter((_, i) => ['allowed', 'approved'].includes(ordered[i]?.decision ?? ''));
            const verdict = await daemon.judge({
              ...env,
              DOJO_MODEL_OUTPUT: answer,
              DOJO_TRACES: JSON.stringify(traces),
            });
            const result: DojoTaskResult = {
              utility: verdict.utility,
              ...(verdict.security !== null ? { attackSucceeded: verdict.security } : {}),
              refused: refusals(journal, script),
              ...(confirmations !== undefined ? { confirmations } : {}),
            };
            ((perPath[p] ??= {})[suite] ??= {})[task] = result;
            log(
              `${p} ${suite} ${task}: utility ${result.utility}` +
                (result.attackSucceeded !== undefined
                  ? `, attack ${result.attackSucceeded ? 'SUCCEEDED' : 'failed'}`
                  : '') +
                (result.refused.length
                  ? `; refused ${result.refused.map((r) => `${r.toolId.replace('tool://dojo/', '')}(${r.rule ?? r.decision}${r.benign ? ', benign' : ''})`).join(', ')}`
                  : ''),
            );
          }
        }
      } finally {
        await gateway?.close();
        for (const w of workers) w.worker.shutdown();
        await Promise.all(workers.map((w) => w.done));
      }
    }
  } finally {
    for (const k of Object.keys(process.env)) if (k.startsWith('DOJO_')) delete process.env[k];
    Object.assign(process.env, saved);
    await daemon.stop();
    await connection.close();
    await native.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const paths: Partial<Record<DojoPath, DojoPathResult>> = {};
  for (const p of opts.paths) paths[p] = pathResult(perPath[p] ?? {});
  return {
    benchmark: { package: `agentdojo ${AGENTDOJO_PACKAGE}`, version, attack },
    model: 'worst-case scripted: the user task’s ground-truth calls, then the injection task’s',
    seconds: Math.round((Date.now() - started) / 1000),
    paths,
  };
}
