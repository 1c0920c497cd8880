// The bench's history breakdown (bench/breakdown.ts), over committed v1 histories: its parts add up
// to the history's size, and a tool request's fields are each weighed, so a cut shows where it lands.
import fs from 'node:fs';
import path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { temporal } from '@temporalio/proto';
import { historyBreakdown } from '../bench/breakdown';

const load = (f: string) =>
  historyFromJSON(JSON.parse(fs.readFileSync(path.join(__dirname, 'histories', f), 'utf8'))).events ?? [];
const bytes = (e: temporal.api.history.v1.IHistoryEvent) =>
  temporal.api.history.v1.HistoryEvent.encode(e).finish().length;

describe('the bench breakdown of history bytes', () => {
  it('splits every byte of a history into parts that add up to its size', () => {
    for (const f of fs.readdirSync(path.join(__dirname, 'histories')).filter((x) => x.endsWith('.json'))) {
      const events = load(f);
      const parts = historyBreakdown(events);
      const sum = Object.values(parts).reduce((a, b) => a + b, 0);
      expect({ f, sum }).toEqual({ f, sum: events.reduce((a, e) => a + bytes(e), 0) });
      expect(Object.values(parts).every((b) => b >= 0)).toBe(true);
    }
  });

  it("weighs a tool request's arguments, ticket and other fields apart, and the run's opening marker", () => {
    const parts = historyBreakdown(load('agent-refund.json'));
    for (const field of ['args', 'ticket', 'toolId', 'principal'])
      expect(parts[`tool input: ${field}`]).toBeGreaterThan(0);
    expect(parts['markers (local activities)']).toBeGreaterThan(0);
    expect(parts['model turn input']).toBeGreaterThan(0);
    expect(parts['model turn results']).toBeGreaterThan(0);
    expect(parts['activity id']).toBeGreaterThan(0);
    expect(parts['activity summaries (userMetadata)']).toBeGreaterThan(0);
  });
});
