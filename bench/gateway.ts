/**
 * The MCP gateway measured beside what it replaces, in one process against one server, sides in
 * alternating rounds (issue 32's bench item). The same fast in-process tool (the CRM lookup) each way:
 *
 * - plain: a running workflow gets an update whose handler runs one plain proxied activity;
 * - direct: `SessionClient.call` into an `mcpSession` run (the governed call, no HTTP);
 * - gateway: the MCP SDK's `Client` over Streamable HTTP against `createGateway`, with a bearer token
 *   and an `_meta.idempotencyKey` per call;
 * - hand-rolled: a minimal MCP server starting one workflow per call (bench/hand-rolled-mcp.ts).
 *
 * Latency from sequential calls of one client; calls per second from `clients` concurrent ones.
 * Part of `npm run bench` (skip it with `--no-gateway`); alone, against a dev server of its own:
 *
 *   npx tsx bench/gateway.ts [--rounds 3] [--calls 50] [--clients 4] [--per-client 25]
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { NativeConnection, WorkerOptions } from '@temporalio/worker';
import { manifestDigest } from '../catalog/digest';
import type { Manifest } from '../catalog/manifest';
import { createTools } from '../examples/support-desk/tools';
import { createGateway } from '../gateway/gateway';
import { SessionClient } from '../gateway/session-client';
import { generateIssuerKey } from '../identity/mint';
import { createWorker } from '../worker';
import { createBenchActivities } from './activities';
import { GATEWAY_SIDES, ISSUER, openers, type Caller, type GatewaySide, type World } from './gateway-sides';
import { startHandRolled } from './hand-rolled-mcp';

export { GATEWAY_SIDES, type GatewaySide };

export interface GatewayBenchOptions {
  client: Client;
  native: NativeConnection;
  workflowBundle: NonNullable<WorkerOptions['workflowBundle']>;
  /** The worker's manifest; it must declare the CRM lookup. */
  manifest: Manifest;
  rounds: number;
  /** Sequential calls per side and round (latency). */
  calls: number;
  /** Concurrent clients per side and round (throughput), each making `perClient` calls. */
  clients: number;
  perClient: number;
}

export interface SideFigures {
  p50: number;
  p99: number;
  /** Calls per second with `clients` concurrent clients. */
  throughput: number;
  latencyCalls: number;
  /** CPU of this process (clients, gateway, worker) per call during the concurrent calls; the server's is not in it. */
  cpuMsPerCall: number;
  /** History events per call of the sequential clients (a session's opening and end spread over its calls). */
  eventsPerCall: number;
  /** Workflow tasks per call, likewise: each is a round trip between the server and the worker. */
  workflowTasksPerCall: number;
  throughputCalls: number;
}

export interface GatewayFigures {
  workload: { rounds: number; calls: number; clients: number; perClient: number };
  sides: Record<GatewaySide, SideFigures>;
  ratios: {
    gatewayVsPlainP50: number;
    gatewayVsPlainP99: number;
    gatewayVsPlainThroughput: number;
    gatewayVsHandRolledP50: number;
    gatewayVsHandRolledThroughput: number;
    directVsPlainP50: number;
    gatewayVsDirectP50: number;
  };
  goals: Record<string, boolean>;
}

/** Opens a client and makes its first call unmeasured (it starts the session's run on the session sides). */
async function warmCaller(open: () => Promise<Caller>): Promise<Caller> {
  const c = await open();
  await c.call(0);
  return c;
}

/** What the histories of a side's sequential calls hold, summed (with the calls, so per call can be taken). */
interface HistoryTally {
  calls: number;
  events: number;
  workflowTasks: number;
}

/** `calls` sequential calls of one client: each call's latency in ms; the histories that hold them, counted. */
async function sequential(
  client: Client,
  open: () => Promise<Caller>,
  calls: number,
  tally: HistoryTally = { calls: 0, events: 0, workflowTasks: 0 },
): Promise<number[]> {
  const c = await warmCaller(open);
  const out: number[] = [];
  try {
    for (let i = 1; i <= calls; i++) {
      const t0 = process.hrtime.bigint();
      await c.call(i);
      out.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
  } finally {
    await c.close();
  }
  // The warm call's events too: a session's opening and end are spread over its calls.
  tally.calls += calls + 1;
  for (const id of c.workflowIds()) {
    const events = (await client.workflow.getHandle(id).fetchHistory()).events ?? [];
    tally.events += events.length;
    tally.workflowTasks += events.filter((e) => e.workflowTaskCompletedEventAttributes).length;
  }
  return out;
}

/**
 * `clients` clients, each making `perClient` sequential calls, all at once: the seconds for all of them and the
 * CPU this process spent meanwhile (clients, gateway, worker and its SDK core; not the Temporal server's).
 */
async function concurrent(
  open: () => Promise<Caller>,
  clients: number,
  perClient: number,
  spent: { seconds: number; cpuMicros: number },
): Promise<void> {
  const cs = await Promise.all(Array.from({ length: clients }, () => warmCaller(open)));
  try {
    const t0 = process.hrtime.bigint();
    const cpu = process.cpuUsage();
    await Promise.all(
      cs.map(async (c, k) => {
        for (let i = 1; i <= perClient; i++) await c.call(k + i);
      }),
    );
    const used = process.cpuUsage(cpu);
    spent.seconds += Number(process.hrtime.bigint() - t0) / 1e9;
    spent.cpuMicros += used.user + used.system;
  } finally {
    await Promise.all(cs.map((c) => c.close()));
  }
}

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
}

/** The gateway, its worker and the hand-rolled server on `client`'s server, each side's client opener, and a stop. */
async function setUp(o: GatewayBenchOptions) {
  const taskQueue = `bench-gateway-${randomUUID()}`;
  const ticketKey = randomBytes(32).toString('base64url');
  const issuer = await generateIssuerKey(ISSUER, 'bench-1');
  const identity = { issuers: [{ issuer: ISSUER, audience: 'toolplane-bench', jwks: issuer.jwks }] };
  const worker = await createWorker({
    connection: o.native,
    taskQueue,
    manifest: o.manifest,
    tools: createTools(),
    workflowBundle: o.workflowBundle,
    activities: createBenchActivities(),
    identity,
    insecureAssertedPrincipals: false,
    ticketKey,
  });
  const running = worker.run();
  const idleTimeoutMs = 10 * 60_000;
  const gateway = await createGateway({
    client: o.client,
    taskQueue,
    manifest: o.manifest,
    identity,
    ticketKey,
    idleTimeoutMs,
  });
  const sessions = new SessionClient({
    client: o.client,
    taskQueue,
    ticketKey,
    idleTimeoutMs,
    manifestDigest: manifestDigest(o.manifest),
  });
  const hand = await startHandRolled(o.client, taskQueue);
  const world: World = { client: o.client, taskQueue, sessions, gateway, issuer, hand };
  return {
    open: openers(world),
    async stop() {
      await gateway.close();
      await hand.close();
      worker.shutdown();
      await running;
    },
  };
}

function figures(
  o: GatewayBenchOptions,
  latencies: Record<GatewaySide, number[]>,
  spent: Record<GatewaySide, { seconds: number; cpuMicros: number }>,
  histories: Record<GatewaySide, HistoryTally>,
) {
  const throughputCalls = o.rounds * o.clients * o.perClient;
  const sides = Object.fromEntries(
    GATEWAY_SIDES.map((s) => [
      s,
      {
        p50: percentile(latencies[s], 50),
        p99: percentile(latencies[s], 99),
        throughput: throughputCalls / spent[s].seconds,
        cpuMsPerCall: spent[s].cpuMicros / 1000 / throughputCalls,
        latencyCalls: latencies[s].length,
        eventsPerCall: histories[s].events / histories[s].calls,
        workflowTasksPerCall: histories[s].workflowTasks / histories[s].calls,
        throughputCalls,
      },
    ]),
  ) as Record<GatewaySide, SideFigures>;
  const { plain, direct, gateway, handRolled } = sides;
  const ratios = {
    gatewayVsPlainP50: gateway.p50 / plain.p50,
    gatewayVsPlainP99: gateway.p99 / plain.p99,
    gatewayVsPlainThroughput: gateway.throughput / plain.throughput,
    gatewayVsHandRolledP50: gateway.p50 / handRolled.p50,
    gatewayVsHandRolledThroughput: gateway.throughput / handRolled.throughput,
    directVsPlainP50: direct.p50 / plain.p50,
    gatewayVsDirectP50: gateway.p50 / direct.p50,
  };
  /** Issue 32's bench goal, as it states it; "ahead" of hand-rolled on both p50 and calls per second. */
  const goals = {
    'gateway p50 <= 1.3x a plain activity behind an update': ratios.gatewayVsPlainP50 <= 1.3,
    'gateway ahead of a hand-rolled activity-per-MCP-call server (p50 and calls/s)':
      ratios.gatewayVsHandRolledP50 < 1 && ratios.gatewayVsHandRolledThroughput > 1,
  };
  return {
    workload: { rounds: o.rounds, calls: o.calls, clients: o.clients, perClient: o.perClient },
    sides,
    ratios,
    goals,
  };
}

/** Runs every side in alternating rounds; the order flips each round so machine noise hits every side alike. */
export async function gatewayBench(
  o: GatewayBenchOptions,
  log: (line: string) => void = () => {},
): Promise<GatewayFigures> {
  const { open, stop } = await setUp(o);
  const latencies = { plain: [], direct: [], gateway: [], handRolled: [] } as Record<GatewaySide, number[]>;
  const spent = Object.fromEntries(GATEWAY_SIDES.map((s) => [s, { seconds: 0, cpuMicros: 0 }])) as Record<
    GatewaySide,
    { seconds: number; cpuMicros: number }
  >;
  const histories = Object.fromEntries(
    GATEWAY_SIDES.map((s) => [s, { calls: 0, events: 0, workflowTasks: 0 }]),
  ) as Record<GatewaySide, HistoryTally>;
  try {
    for (const side of GATEWAY_SIDES) await sequential(o.client, open[side], 3); // warm-up: every path compiled and cached
    for (let r = 0; r < o.rounds; r++) {
      const order = r % 2 === 1 ? [...GATEWAY_SIDES].reverse() : GATEWAY_SIDES;
      for (const side of order)
        latencies[side].push(...(await sequential(o.client, open[side], o.calls, histories[side])));
      for (const side of [...order].reverse()) await concurrent(open[side], o.clients, o.perClient, spent[side]);
      log(`gateway round ${r + 1}/${o.rounds} done`);
    }
  } finally {
    await stop();
  }
  return figures(o, latencies, spent, histories);
}

/** The table `npm run bench` prints. */
export function gatewayRows(f: GatewayFigures): string[] {
  const cell = (x: number, d = 1) => x.toFixed(d).padStart(14);
  const names: Record<GatewaySide, string> = {
    plain: 'plain activity (update)',
    direct: 'direct (SessionClient)',
    gateway: 'gateway (MCP over HTTP)',
    handRolled: 'hand-rolled MCP server',
  };
  const w = f.workload;
  return [
    `\nMCP gateway: ${w.calls} sequential calls per side and round for latency, ${w.clients} clients × ${w.perClient} calls for calls/s, ${w.rounds} rounds`,
    `${''.padEnd(28)}${['p50 ms', 'p99 ms', 'calls/s', 'CPU ms/call', 'events/call', 'wf tasks/call'].map((h) => h.padStart(14)).join('')}`,
    ...GATEWAY_SIDES.map((s) => {
      const x = f.sides[s];
      return `${names[s].padEnd(28)}${[x.p50, x.p99, x.throughput, x.cpuMsPerCall, x.eventsPerCall, x.workflowTasksPerCall].map((v) => cell(v, 2)).join('')}`;
    }),
    `gateway / plain:        p50 ${f.ratios.gatewayVsPlainP50.toFixed(2)}x, p99 ${f.ratios.gatewayVsPlainP99.toFixed(2)}x, calls/s ${f.ratios.gatewayVsPlainThroughput.toFixed(2)}x`,
    `gateway / hand-rolled:  p50 ${f.ratios.gatewayVsHandRolledP50.toFixed(2)}x, calls/s ${f.ratios.gatewayVsHandRolledThroughput.toFixed(2)}x`,
    `where the p50 goes:     direct / plain ${f.ratios.directVsPlainP50.toFixed(2)}x (the governed session call), gateway / direct ${f.ratios.gatewayVsDirectP50.toFixed(2)}x (HTTP, MCP, bearer)`,
  ];
}
