// `npm run eval:agentdojo`: AgentDojo through toolplane on a dev server of its own (eval/agentdojo/harness.ts);
// results to eval/results/agentdojo.json.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Command, Option } from 'commander';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { freePort, startDevServer } from '../../scripts/dev-server';
import {
  mergeResults,
  PATHS,
  runDojo,
  SUITES,
  type DojoModel,
  type DojoPath,
  type DojoResults,
  type DojoTaskResult,
} from './harness';
import { parse as parseYaml } from 'yaml';
import { ModelsDecl } from '../../catalog/models-decl';
import { BENCHMARK_VERSION, DojoBadInput } from './python';

const list = (v: string) =>
  v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/** `--model endpoint[/model]` among `--models <file>`'s endpoints, checked before anything starts. */
function dojoModel(named: string, file: string | undefined): DojoModel {
  if (!file) throw new DojoBadInput('--model needs --models <file>: the endpoints the worker serves');
  const slash = named.indexOf('/');
  const endpoint = slash < 0 ? named : named.slice(0, slash);
  const modelId = slash < 0 ? undefined : named.slice(slash + 1);
  let raw: unknown;
  try {
    raw = parseYaml(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new DojoBadInput(`--models ${file}: ${(err as Error).message}`);
  }
  const parsed = ModelsDecl.safeParse(raw);
  if (!parsed.success)
    throw new DojoBadInput(
      `--models ${file}: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`,
    );
  const decl = parsed.data[endpoint];
  if (!decl) throw new DojoBadInput(`--model ${named}: ${file} declares no endpoint "${endpoint}"`);
  if (modelId && decl.provider !== 'scripted' && !decl.models.includes(modelId))
    throw new DojoBadInput(`--model ${named}: endpoint "${endpoint}" serves ${decl.models.join(', ')}`);
  return { endpoints: parsed.data, endpoint, ...(modelId ? { model: modelId } : {}) };
}

async function main(): Promise<void> {
  const cmd = new Command('eval:agentdojo')
    .description('AgentDojo suites through toolplane with the worst-case scripted model, judged by AgentDojo')
    .option('--suite <names>', `suites, comma separated (${SUITES.join(', ')})`, SUITES.join(','))
    .option('--tasks <ids>', 'user_task_N (no attack) or user_task_N/injection_task_M, comma separated')
    .option('--limit <n>', 'the first N user tasks of each suite, and their pairs', (v) => Number(v))
    .option(
      '--attack <name>',
      'the attack placing the injections (important_instructions, tool_knowledge, ...; none: no pairs)',
      'important_instructions',
    )
    .option('--path <paths>', `paths, comma separated (${PATHS.join(', ')})`, PATHS.join(','))
    .option('--concurrency <n>', 'runs going on beside each other', (v) => Number(v), 4)
    .option('--version <v>', 'the benchmark version', BENCHMARK_VERSION)
    .option(
      '--merge',
      'fold these runs into the results already in --out (a task or pair run again replaces its old result)',
    )
    .option('--out <file>', 'where the results go', path.resolve(__dirname, '..', 'results', 'agentdojo.json'))
    .option(
      '--models <file>',
      "model endpoints the harness's worker serves: a YAML or JSON map as a manifest's `models` section (keys from the environment, as `api_key_env` names)",
    )
    .option(
      '--model <endpoint[/model]>',
      'a real model in place of the scripted one, on agentRun: an endpoint of --models, and one of its models',
    )
    .addOption(
      new Option(
        '--principal <who>',
        'who answers when a run asks its principal: careful (vouches only for what the task needs) or none',
      )
        .choices(['careful', 'none'])
        .default('none'),
    )
    .addOption(
      new Option(
        '--host <what>',
        'what the host tells the plane of the request: open (the prompt alone) or narrows (it names the tools of the actions the user asked for)',
      )
        .choices(['open', 'narrows'])
        .default('open'),
    )
    .parse();
  const o = cmd.opts<{
    suite: string;
    tasks?: string;
    limit?: number;
    attack: string;
    path: string;
    version: string;
    out: string;
    merge?: boolean;
    principal: 'careful' | 'none';
    host: 'open' | 'narrows';
    concurrency: number;
    models?: string;
    model?: string;
  }>();
  const model = o.model ? dojoModel(o.model, o.models) : undefined;
  if (o.models && !model) throw new DojoBadInput('--models without --model: name the endpoint the runs use');
  const paths = list(o.path);
  for (const p of paths)
    if (!(PATHS as readonly string[]).includes(p)) throw new Error(`no path "${p}" (one of ${PATHS.join(', ')})`);
  const suites = list(o.suite);
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentdojo-temporal-'));
  const server = await startDevServer({
    port: await freePort(),
    uiPort: await freePort(),
    dbFile: path.join(dir, 'temporal.sqlite'),
  });
  try {
    const fresh = await runDojo({
      address: server.address,
      suites,
      ...(o.tasks ? { tasks: list(o.tasks) } : {}),
      ...(o.limit ? { limit: o.limit } : {}),
      attack: o.attack,
      paths: paths as DojoPath[],
      version: o.version,
      principal: o.principal,
      host: o.host,
      concurrency: o.concurrency,
      ...(model ? { model } : {}),
      log: (l) => console.error(l),
    });
    const results =
      o.merge && fs.existsSync(o.out)
        ? mergeResults(JSON.parse(fs.readFileSync(o.out, 'utf8')) as DojoResults, fresh)
        : fresh;
    fs.mkdirSync(path.dirname(o.out), { recursive: true });
    fs.writeFileSync(o.out, JSON.stringify(results, null, 1) + '\n');
    // Each path beside the undefended reference (the ceiling: the same calls with no plane in between).
    const ref = (results as Partial<DojoResults>).undefended;
    const beside = (n: number | string, refN: number | undefined) =>
      refN === undefined ? `${n}` : `${n} (undefended ${refN})`;
    for (const [p, r] of Object.entries(results.paths)) {
      const attacked = r.counts.pairs > 0;
      console.log(
        `${p}: utility without attack ${beside(r.utilityWithoutAttack, ref?.utilityWithoutAttack)}` +
          (attacked
            ? `, under attack ${beside(r.utilityUnderAttack, ref?.utilityUnderAttack)}, ` +
              `attacks succeeded ${beside(r.successfulAttacks, ref?.successfulAttacks)}`
            : '') +
          `; principal asked ${r.confirmations.benignPerTask} per task (${r.confirmations.benignConfirmed} yes of ${r.confirmations.benignAsked}), ${r.confirmations.pairsAsked} under attack`,
      );
      for (const [s, sr] of Object.entries(r.suites)) {
        const c = sr.counts;
        const rc = ref?.suites[s]?.counts;
        console.log(
          `  ${s}: ${beside(`${c.benignUtility}/${c.tasks}`, rc?.benignUtility)} benign` +
            (c.pairs > 0
              ? `, ${beside(`${c.utilityUnderAttack}/${c.pairs}`, rc?.utilityUnderAttack)} under attack, ` +
                `${beside(`${c.attacks}/${c.pairs}`, rc?.attacks)} attacks`
              : ''),
        );
      }
    }
    // A path that falls short of the reference with nothing refused is the harness's defect, not the plane's
    // (with the scripted model; a real model may simply not do the task).
    for (const [p, r] of model ? [] : Object.entries(results.paths)) {
      const unexplained = Object.entries(r.suites).flatMap(([s, sr]) =>
        Object.entries(sr.tasks).flatMap(([t, x]) => {
          const u = ref?.suites[s]?.tasks[t];
          if (!u) return [];
          const why = [
            ...(u.utility && !x.utility && !x.refused.some((f) => f.benign) ? ['utility'] : []),
            ...(u.attackSucceeded && x.attackSucceeded === false && !x.refused.some((f) => !f.benign)
              ? ['attack']
              : []),
          ];
          return why.length ? [`${s}/${t} (${why.join(', ')})`] : [];
        }),
      );
      if (unexplained.length)
        console.log(`${p} falls short of the reference with nothing refused on ${unexplained.join(', ')}`);
    }
    if (ref) {
      // The benchmark's own ceiling: what the ground truth fails with nothing in its way.
      const failing = (bad: (t: DojoTaskResult) => boolean) =>
        Object.entries(ref.suites).flatMap(([s, sr]) =>
          Object.entries(sr.tasks)
            .filter(([, t]) => bad(t))
            .map(([t]) => `${s}/${t}`),
        );
      const utility = failing((t) => !t.utility);
      const attacks = failing((t) => t.attackSucceeded === false);
      console.log(`undefended ground truth fails utility on ${utility.length ? utility.join(', ') : 'no task'}`);
      if (attacks.length)
        console.log(
          `undefended injection ground truth fails its own goal (those pairs test nothing) on ${attacks.join(', ')}`,
        );
    }
    console.log(`${results.seconds} s; results in ${path.relative(process.cwd(), o.out)}`);
  } finally {
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
