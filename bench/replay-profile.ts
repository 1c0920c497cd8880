/**
 * Where replay CPU goes, by step: replays a history under V8's sampling profiler and charges each
 * sample to the innermost frame of the project's own code on its stack (mapped through the workflow
 * bundle's source map), grouped by the step of a call that file implements. A sample with no project
 * frame is the SDK's (inside the sandbox) or the worker's (outside it: activations, the core bridge).
 * Sampled: the figures are shares of the replay, good to compare, not exact to the microsecond.
 */
import { Session } from 'node:inspector/promises';
import path from 'node:path';
import { Worker } from '@temporalio/worker';
import type { temporal } from '@temporalio/proto';
import { SourceMapConsumer, type RawSourceMap } from 'source-map-js';

type Event = temporal.api.history.v1.IHistoryEvent;

/** Steps, by the project files that implement them (first match wins). */
const STEPS: [step: string, files: RegExp][] = [
  // catalog/digest.ts hashes for its callers, and is charged to them (the effect key, the offered tools' digest).
  ['effect key', /^common\/effect-key\.ts$/],
  ['gate (rules, provenance, limits)', /^(workflows\/gate\/|workflows\/call\/gate\.ts)/],
  ['prepare (catalog, schema)', /^(catalog\/|workflows\/call\/prepare\.ts)/],
  ['perform and recovery', /^(workflows\/call\/perform\.ts|workflows\/recovery)/],
  [
    'status (details, tally, search attributes)',
    /^workflows\/(run-status|run\/status|call-tally|details-text|run-span)\.ts$/,
  ],
  ['ticket', /^common\/ticket\.ts$/],
  ['stream', /^workflows\/run-stream\.ts$/],
  ['agent loop', /^workflows\/agent\//],
  ['pipeline and StepCtx', /^workflows\/(call\/|step-ctx\.ts|run\/)/],
  ['bench workflow itself', /^bench\//],
  ['other project code', /./],
];
const SDK = 'SDK in the sandbox';
/** catalog/digest.ts: transparent, as the SDK is, so its time goes to the project frame that called it. */
const HASHING = 'hashing (catalog/digest.ts) outside any step';
const WORKER = 'worker outside the sandbox';

const root = path.resolve(__dirname, '..');

/** Outside the sandbox, by what the sample's own frame is. `(idle)` is waiting, not CPU. */
function outside(n: ProfileNode): string {
  const { url } = n.callFrame;
  const name = n.callFrame.functionName ?? '';
  if (name === '(garbage collector)') return `${WORKER}: garbage collection`;
  if (name === '(idle)') return IDLE;
  if (name === '(program)' || url === '') return `${WORKER}: native (core bridge, V8)`;
  if (url.includes('@temporalio/')) return `${WORKER}: SDK worker (activations, replay)`;
  if (url.startsWith('node:')) return `${WORKER}: node internals`;
  return `${WORKER}: other`;
}
const IDLE = '(idle)';

function bundleMap(code: string): SourceMapConsumer {
  const at = code.lastIndexOf('//# sourceMappingURL=data:');
  const data = code.slice(at).split('base64,')[1]!.trim();
  return new SourceMapConsumer(JSON.parse(Buffer.from(data, 'base64').toString('utf8')) as RawSourceMap);
}

/** The step a source file belongs to, or undefined for code that is not the project's. */
function stepOf(source: string): string | undefined {
  if (source.includes('/node_modules/')) return undefined;
  const file = path.relative(root, source.replace(/^webpack:\/\/\/?/, '').replace(/^file:\/\//, ''));
  if (file.startsWith('..') || file === 'catalog/digest.ts') return undefined;
  return STEPS.find(([, re]) => re.test(file))?.[0];
}

type ProfileNode = {
  id: number;
  callFrame: { url: string; lineNumber: number; columnNumber: number; functionName?: string };
  children?: number[];
};

/** Replays each history once under the profiler: µs of sampled time per step, over all of them. */
export async function profiledReplay(bundle: { code: string }, histories: Event[][], id: string) {
  const map = bundleMap(bundle.code);
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  await session.post('Profiler.start');
  for (const events of histories) await Worker.runReplayHistory({ workflowBundle: bundle }, { events }, id);
  const { profile } = (await session.post('Profiler.stop')) as {
    profile: { nodes: ProfileNode[]; samples?: number[]; timeDeltas?: number[] };
  };
  session.disconnect();

  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  // A frame: a project step, the SDK (bundle code from node_modules), or outside the bundle.
  const frameKind = new Map<number, string>();
  const kindOf = (n: ProfileNode): string => {
    let k = frameKind.get(n.id);
    if (k !== undefined) return k;
    const { url, lineNumber, columnNumber } = n.callFrame;
    if (/workflow-bundle-/.test(url) && lineNumber >= 0) {
      const src = map.originalPositionFor({ line: lineNumber + 1, column: columnNumber }).source;
      k = (src && stepOf(src)) ?? (src && !src.includes('/node_modules/') ? HASHING : SDK);
    } else k = WORKER;
    frameKind.set(n.id, k);
    return k;
  };
  const stepOfSample = new Map<number, string>();
  const charge = (leaf: number): string => {
    let s = stepOfSample.get(leaf);
    if (s !== undefined) return s;
    let inSandbox = false;
    for (let id: number | undefined = leaf; id !== undefined; id = parent.get(id)) {
      const k = kindOf(byId.get(id)!);
      if (k !== SDK && k !== WORKER && k !== HASHING) {
        s = k;
        break;
      }
      if (k === SDK || k === HASHING) inSandbox = true;
    }
    s ??= inSandbox ? SDK : outside(byId.get(leaf)!);
    stepOfSample.set(leaf, s);
    return s;
  };
  const out: Record<string, number> = {};
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  for (let i = 0; i < samples.length; i++) {
    const s = charge(samples[i]!);
    if (s === IDLE) continue;
    // A sample's time is the delta to the next one.
    out[s] = (out[s] ?? 0) + (deltas[i + 1] ?? 0);
  }
  return out;
}

/** µs per call by step, largest first. */
export function perCallSteps(micros: Record<string, number>, calls: number): [string, number][] {
  return Object.entries(micros)
    .map(([s, us]): [string, number] => [s, us / calls])
    .sort((a, b) => b[1] - a[1]);
}
