import fs from 'node:fs';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
const h = historyFromJSON(JSON.parse(fs.readFileSync(process.argv[2]!, 'utf8')));
const types = new Map<string, string>();
for (const e of h.events ?? []) {
  const s = e.activityTaskScheduledEventAttributes;
  if (s) { types.set(String(e.eventId), s.activityType!.name!); if (s.activityType!.name!.match(/[Tt]urn|invoke/)) console.log('IN', Buffer.from(s.input!.payloads![0]!.data!).toString().slice(0, 400)); }
  const c = e.activityTaskCompletedEventAttributes;
  if (c && (types.get(String(c.scheduledEventId)) ?? '').match(/[Tt]urn|invoke/)) console.log('OUT', Buffer.from(c.result!.payloads![0]!.data!).toString().slice(0, 700));
}
