import fs from 'node:fs';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { temporal } from '@temporalio/proto';
const f = process.argv[2]!;
const h = historyFromJSON(JSON.parse(fs.readFileSync(f, 'utf8')));
for (const e of h.events ?? []) {
  const bytes = temporal.api.history.v1.HistoryEvent.encode(e).finish().length;
  const m = e.markerRecordedEventAttributes;
  const u = e.upsertWorkflowSearchAttributesEventAttributes;
  if (m) {
    console.log('MARKER', bytes, m.markerName);
    for (const [k, v] of Object.entries(m.details ?? {})) for (const p of v.payloads ?? []) console.log('  ', k, Buffer.from(p.data!).toString().slice(0, 3000), JSON.stringify(p.metadata && Object.fromEntries(Object.entries(p.metadata).map(([a,b])=>[a,Buffer.from(b).toString()]))));
  }
  if (u) {
    console.log('UPSERT', bytes);
    for (const [k, p] of Object.entries(u.searchAttributes?.indexedFields ?? {})) console.log('  ', k, Buffer.from(p.data!).toString(), JSON.stringify(p.metadata && Object.fromEntries(Object.entries(p.metadata).map(([a,b])=>[a,Buffer.from(b).toString()]))));
  }
  const s = e.activityTaskScheduledEventAttributes;
  if (s && process.argv[3]) { console.log('SCHED', bytes, s.activityId, s.activityType?.name, Buffer.from(s.input!.payloads![0]!.data!).toString().slice(0,600), JSON.stringify(s.retryPolicy)); }
}
