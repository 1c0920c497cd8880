// A run's openings, as its own history holds them: the worker's answers to `authorizeRun` (local
// activity markers), each with the ticket it issued. A tool request that carries no MAC is checked
// against these, so history carries the ticket once per run instead of once per call. The MACs
// cover the run's ids, so a marker copied into another run's history, or written by a workflow
// the worker never answered, proves nothing.
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { temporal } from '@temporalio/proto';
import { decodeOptionalSinglePayload } from '@temporalio/common/lib/internal-non-workflow';
import { shortDigest, toolDigest } from '../../catalog/digest';
import { FailureType } from '../../catalog/failure-types';
import { toolPermit, type RunTicket } from '../../common/ticket';
import type { ToolDecl } from '../../catalog/manifest';
import type { AuthorizeResult, PerformRequest, ReconcileRequest } from '../../common/wire';
import { readAuthority } from '../../common/authorize-answer';
import type { RunIds } from './tickets';

/** The marker Temporal's core records for a local activity's outcome. */
const LOCAL_ACTIVITY_MARKER = 'core_local_activity';
/** Runs whose openings this process remembers (a run's first call reads them once). */
const REMEMBERED_RUNS = 1024;
const PAGE_SIZE = 200;

/** One answer of the worker to the run: its ticket, and the short digest of each tool as it declared it. */
interface Opening {
  ticket: RunTicket;
  declared: Map<string, string>;
}

/** What a tool request without a MAC is checked against: the opening's MAC and its declaration of the tool. */
export interface OpenedPermit {
  mac: string;
  /** The run's declaration of the tool, as a short digest (absent when the opening names none). */
  digest?: string;
  /** Whom the opening's ticket acts for. */
  principal: string;
}

interface Openings {
  tickets: Opening[];
  /** The run's first opening, once known: read from the start of its history, or issued as its first local activity. */
  first?: Opening;
  /** Where the next read continues: the page token after the events read so far. */
  nextPageToken?: Uint8Array;
  /** Every event was read: a later opening needs a new read from `nextPageToken`. */
  complete: boolean;
}

const remembered = new Map<string, Promise<Openings>>();
const keyOf = (run: RunIds) => `${run.workflowId}\u0000${run.runId}`;

/** Remembers a run's openings, forgetting the oldest run beyond the bound. */
function remember(key: string, openings: Promise<Openings>): void {
  if (remembered.size >= REMEMBERED_RUNS) remembered.delete(remembered.keys().next().value!);
  remembered.set(key, openings);
}

/** An opening: the ticket, and each granted tool's declaration as a short digest. */
const openingOf = (ticket: RunTicket, tools: ToolDecl[]): Opening => ({
  ticket,
  declared: new Map(tools.map((t) => [t.id, shortDigest(toolDigest(t))])),
});

function isTicket(v: unknown): v is RunTicket {
  const t = v as RunTicket | undefined;
  return (
    typeof t === 'object' &&
    t !== null &&
    typeof t.identity?.principal === 'string' &&
    typeof t.permits === 'object' &&
    t.permits !== null
  );
}

/** The tickets among a page's markers: any local activity whose answer holds one (only authorizeRun's do). */
async function ticketsIn(events: temporal.api.history.v1.IHistoryEvent[]): Promise<Opening[]> {
  const converter = Context.current().client.options.loadedDataConverter;
  const out: Opening[] = [];
  for (const e of events) {
    const m = e.markerRecordedEventAttributes;
    if (!m || m.markerName !== LOCAL_ACTIVITY_MARKER) continue;
    const payload = m.details?.result?.payloads?.[0];
    if (!payload) continue;
    try {
      const answer = await decodeOptionalSinglePayload<Partial<AuthorizeResult>>(converter, payload);
      if (!answer?.ticket || !answer.identity || !Array.isArray(answer.tools)) continue;
      // Read as the run reads it: the ticket's identity and each declaration's defaults restored.
      const { ticket, tools } = readAuthority(answer as AuthorizeResult);
      if (!isTicket(ticket)) continue;
      out.push(openingOf(ticket, tools));
    } catch {
      // Another local activity's answer, in a shape the converter cannot read: not an opening.
    }
  }
  return out;
}

/** Reads on from `from`, until `enough` is satisfied or the history ends. */
async function readOn(run: RunIds, from: Openings, enough: (o: Opening) => boolean): Promise<Openings> {
  const client = Context.current().client;
  const tickets = [...from.tickets];
  let nextPageToken = from.nextPageToken;
  for (;;) {
    const page = await client.workflowService.getWorkflowExecutionHistory({
      namespace: client.options.namespace,
      execution: run,
      maximumPageSize: PAGE_SIZE,
      ...(nextPageToken?.length ? { nextPageToken } : {}),
    });
    const found = await ticketsIn(page.history?.events ?? []);
    tickets.push(...found);
    nextPageToken = page.nextPageToken ?? undefined;
    const complete = !nextPageToken?.length;
    if (complete || found.some(enough)) return { tickets, nextPageToken, complete };
  }
}

const hasPermit = ({ ticket: t }: Opening, permit: string) => Object.prototype.hasOwnProperty.call(t.permits, permit);

/** What an opening holds for `permit`, or undefined. */
function permitOf(found: Opening | undefined, permit: string, toolId?: string): OpenedPermit | undefined {
  if (!found || !hasPermit(found, permit)) return undefined;
  const digest = toolId === undefined ? undefined : found.declared.get(toolId);
  return {
    mac: found.ticket.permits[permit]!,
    principal: found.ticket.identity.principal,
    ...(digest ? { digest } : {}),
  };
}

/** The run's first opening (the one a request without a principal acts under), read from its history once per process. */
async function firstOpening(run: RunIds): Promise<Opening | undefined> {
  const key = keyOf(run);
  const known = await remembered.get(key)?.catch(() => undefined);
  if (known?.first) return known.first;
  // From the start of the history, until an opening shows: the first one there is the run's first.
  const read = readOn(run, { tickets: [], complete: false }, () => true).then((o) => ({ ...o, first: o.tickets[0] }));
  remember(key, read);
  read.catch(() => remembered.get(key) === read && remembered.delete(key));
  return (await read).first;
}

/**
 * The MAC the run's opening holds for `permit`, acting for `principal`; undefined when no opening
 * of the run holds one. Read from the run's history on a run's first call in this process. Without
 * a principal (format v1's leaner request, issue 45), the run's first opening: its principal, if its
 * ticket holds the permit (a later opening's ticket, for another principal, never stands in for it).
 */
export async function permitFromOpening(
  run: RunIds,
  principal: string | undefined,
  permit: string,
  toolId?: string,
): Promise<OpenedPermit | undefined> {
  if (principal === undefined) return permitOf(await firstOpening(run), permit, toolId);
  const holds = (o: Opening) => o.ticket.identity.principal === principal && hasPermit(o, permit);
  const key = keyOf(run);
  let read = remembered.get(key);
  let openings = read ? await read.catch(() => undefined) : undefined;
  if (!openings?.tickets.some(holds)) {
    // Not read yet, or read before the opening that holds it (a workflow may open more than once):
    // read on from where the last read stopped, or from the start once the history was read whole.
    read = readOn(run, openings && !openings.complete ? openings : { tickets: [], complete: false }, holds);
    remember(key, read);
    // A failed read is not remembered: the next call reads again.
    read.catch(() => remembered.get(key) === read && remembered.delete(key));
    openings = await read;
  }
  return permitOf(openings.tickets.find(holds), permit, toolId);
}

/** A request as the worker acts on it: with its principal (a request that leaves it out acts for its run's first opening's). */
export type Presented<R extends PerformRequest | ReconcileRequest> = R & { principal: string };

/**
 * A request without a MAC (format v1's lean request) presents the one its run's opening holds, with
 * the run's declaration of the tool: read from the run's history once per run and process.
 */
export async function presented<R extends PerformRequest | ReconcileRequest>(req: R): Promise<Presented<R>> {
  // A request with its ticket carries its principal (a ledger reference is verified against it alone);
  // one that names none is refused for want of a ticket (`checkTicket`), as is one whose run has no opening.
  if (req.ticket !== undefined) return { ...req, principal: req.principal ?? '' };
  const run = Context.current().info.workflowExecution ?? { workflowId: '', runId: '' };
  let opened;
  try {
    opened = await permitFromOpening(run, req.principal, toolPermit(req.toolId), req.toolId);
  } catch (err) {
    // Nothing was sent: a resend or Temporal's retry may find the history readable.
    throw ApplicationFailure.retryable(
      `${req.toolId}: the run's opening could not be read from its history (${(err as Error).message}); nothing was sent`,
      FailureType.Rejected,
    );
  }
  if (!opened) return { ...req, principal: req.principal ?? '' };
  return {
    ...req,
    principal: opened.principal,
    ticket: opened.mac,
    ...(opened.digest ? { digest: opened.digest } : {}),
  } as Presented<R>;
}

/**
 * Remembers the opening this worker just issued to `run` (authorizeRun, a local activity, runs on the
 * worker that takes the run's workflow task, which usually takes its first tool call too).
 */
export function rememberOpening(run: RunIds, ticket: RunTicket, tools: ToolDecl[], first: boolean): void {
  const key = keyOf(run);
  if (remembered.has(key)) return;
  const opening = openingOf(ticket, tools);
  remember(key, Promise.resolve({ tickets: [opening], complete: false, ...(first ? { first: opening } : {}) }));
}
