/**
 * Where a run's history bytes go, by field: each event's encoded size is split into the parts a
 * change could cut (a tool activity's input: its arguments, its ticket and its other fields; the
 * activity's summary (user metadata); its header; the model turn's input; results; workflow tasks;
 * search attribute and memo upserts; the markers of local activities) so that the parts add up to
 * the history's size. Current Details are not in history (the Web UI asks the run for them).
 */
import { temporal } from '@temporalio/proto';

type Event = temporal.api.history.v1.IHistoryEvent;
const HistoryEvent = temporal.api.history.v1.HistoryEvent;

const eventBytes = (e: Event): number => HistoryEvent.encode(e).finish().length;

/** What the parts are called, in the order they print; a tool request's other fields print by name after its ticket. */
export const PARTS = [
  'tool input: args',
  'tool input: ticket',
  'tool input: payload framing',
  'model turn input',
  'activity summaries (userMetadata)',
  'activity headers',
  'activity id',
  'activity retry policy',
  'activity scheduled: the rest',
  'activity started',
  'model turn results',
  'activity results',
  'workflow tasks',
  'search attribute upserts',
  'memo upserts',
  'markers (local activities)',
  'run start and end',
  'other',
] as const;
/** Bytes by part: the PARTS, and `tool input: <field>` for each other field of a tool's request. */
export type Breakdown = Record<string, number>;

const add = (into: Breakdown, part: string, bytes: number) => void (into[part] = (into[part] ?? 0) + bytes);

export const emptyBreakdown = (): Breakdown => Object.fromEntries(PARTS.map((p) => [p, 0]));

/** The parts in print order: the fixed ones, the tool request's other fields after its ticket. */
function ordered(keys: Iterable<string>): string[] {
  const fields = [...keys].filter((k) => !(PARTS as readonly string[]).includes(k)).sort();
  const at = PARTS.indexOf('tool input: payload framing');
  return [...PARTS.slice(0, at), ...fields, ...PARTS.slice(at)];
}

/** Activity types whose input is the model's turn, on every side. */
const MODEL_TURNS = new Set(['modelTurn', 'benchModelTurn', 'invokeModel']);

/** The bytes an event loses when `strip` removes a part of it (a copy: the event is left alone). */
function partBytes(e: Event, strip: (copy: Event) => void): number {
  const copy = HistoryEvent.decode(HistoryEvent.encode(e).finish());
  strip(copy);
  return eventBytes(e) - eventBytes(copy);
}

/** JSON of a payload, or undefined when it is not a JSON object. */
function jsonObject(data: Uint8Array | null | undefined): Record<string, unknown> | undefined {
  if (!data) return undefined;
  try {
    const v: unknown = JSON.parse(Buffer.from(data).toString('utf8'));
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Splits a scheduled activity's event into its parts, adding them to `into`. */
function scheduled(e: Event, into: Breakdown): void {
  const a = e.activityTaskScheduledEventAttributes!;
  const total = eventBytes(e);
  const summary = e.userMetadata ? partBytes(e, (c) => (c.userMetadata = null)) : 0;
  const header = a.header ? partBytes(e, (c) => (c.activityTaskScheduledEventAttributes!.header = null)) : 0;
  const input = a.input ? partBytes(e, (c) => (c.activityTaskScheduledEventAttributes!.input = null)) : 0;
  const id = partBytes(e, (c) => (c.activityTaskScheduledEventAttributes!.activityId = ''));
  const retry = a.retryPolicy ? partBytes(e, (c) => (c.activityTaskScheduledEventAttributes!.retryPolicy = null)) : 0;
  add(into, 'activity summaries (userMetadata)', summary);
  add(into, 'activity headers', header);
  add(into, 'activity id', id);
  add(into, 'activity retry policy', retry);
  add(into, 'activity scheduled: the rest', total - summary - header - input - id - retry);
  if (MODEL_TURNS.has(a.activityType?.name ?? '')) {
    add(into, 'model turn input', input);
    return;
  }
  // A tool's request: what each of its fields weighs (what the event loses without it), the rest as framing.
  const payload = a.input?.payloads?.[0];
  const request = jsonObject(payload?.data);
  if (!request || !('toolId' in request)) {
    // A plain activity's input is the arguments themselves: its data, in the payload's framing.
    const args = partBytes(e, (c) => (c.activityTaskScheduledEventAttributes!.input!.payloads![0]!.data = null));
    add(into, 'tool input: args', args);
    add(into, 'tool input: payload framing', input - args);
    return;
  }
  let fields = 0;
  for (const field of Object.keys(request)) {
    const bytes = partBytes(e, (c) => {
      const p = c.activityTaskScheduledEventAttributes!.input!.payloads![0]!;
      const { [field]: _dropped, ...rest } = request;
      p.data = Buffer.from(JSON.stringify(rest));
    });
    add(into, `tool input: ${field}`, bytes);
    fields += bytes;
  }
  add(into, 'tool input: payload framing', input - fields);
}

/** A history's bytes by part; they add up to the history's encoded size (events summed). */
export function historyBreakdown(events: Event[]): Breakdown {
  const out = emptyBreakdown();
  const types = new Map<string, string>();
  for (const e of events)
    if (e.activityTaskScheduledEventAttributes)
      types.set(String(e.eventId), e.activityTaskScheduledEventAttributes.activityType?.name ?? '');
  for (const e of events) {
    const bytes = eventBytes(e);
    if (e.activityTaskScheduledEventAttributes) scheduled(e, out);
    else if (e.activityTaskStartedEventAttributes) add(out, 'activity started', bytes);
    else if (
      e.activityTaskCompletedEventAttributes ||
      e.activityTaskFailedEventAttributes ||
      e.activityTaskTimedOutEventAttributes
    ) {
      const of =
        e.activityTaskCompletedEventAttributes ??
        e.activityTaskFailedEventAttributes ??
        e.activityTaskTimedOutEventAttributes;
      const model = MODEL_TURNS.has(types.get(String(of?.scheduledEventId)) ?? '');
      add(out, model ? 'model turn results' : 'activity results', bytes);
    } else if (
      e.workflowTaskScheduledEventAttributes ||
      e.workflowTaskStartedEventAttributes ||
      e.workflowTaskCompletedEventAttributes ||
      e.workflowTaskFailedEventAttributes ||
      e.workflowTaskTimedOutEventAttributes
    )
      add(out, 'workflow tasks', bytes);
    else if (e.upsertWorkflowSearchAttributesEventAttributes) add(out, 'search attribute upserts', bytes);
    else if (e.workflowPropertiesModifiedEventAttributes) add(out, 'memo upserts', bytes);
    else if (e.markerRecordedEventAttributes) add(out, 'markers (local activities)', bytes);
    else if (
      e.workflowExecutionStartedEventAttributes ||
      e.workflowExecutionCompletedEventAttributes ||
      e.workflowExecutionContinuedAsNewEventAttributes ||
      e.workflowExecutionFailedEventAttributes
    )
      add(out, 'run start and end', bytes);
    else add(out, 'other', bytes);
  }
  return out;
}

export function addBreakdown(into: Breakdown, b: Breakdown): void {
  for (const [p, bytes] of Object.entries(b)) add(into, p, bytes);
}

export function scaleBreakdown(b: Breakdown, by: number): Breakdown {
  return Object.fromEntries(Object.entries(b).map(([p, bytes]) => [p, bytes / by]));
}

/** Side by side, per call: each part of `a` and `b`, and what `b` adds. */
export function breakdownRows(title: string, names: [string, string], a: Breakdown, b: Breakdown): string[] {
  const rows = [`${title.padEnd(36)}${names[0].padStart(12)}${names[1].padStart(12)}${'added'.padStart(10)}`];
  let [ta, tb] = [0, 0];
  for (const p of ordered(new Set([...Object.keys(a), ...Object.keys(b)]))) {
    const [x, y] = [a[p] ?? 0, b[p] ?? 0];
    ta += x;
    tb += y;
    if (x === 0 && y === 0) continue;
    rows.push(
      `  ${p.padEnd(34)}${x.toFixed(1).padStart(12)}${y.toFixed(1).padStart(12)}${(y - x).toFixed(1).padStart(10)}`,
    );
  }
  rows.push(
    `  ${'total'.padEnd(34)}${ta.toFixed(1).padStart(12)}${tb.toFixed(1).padStart(12)}${(tb - ta).toFixed(1).padStart(10)}`,
  );
  return rows;
}
