// The worker's ticket MACs: the same bytes for the same run, principal and permit on every worker
// version (a run's opening in history must keep opening its calls after an upgrade), and a MAC the
// worker remembers having computed opens that exact permit and nothing beside it.
import { TicketIssuer } from '../../activities/identity/tickets';

const key = Buffer.alloc(32, 0x2a);
const run = { workflowId: 'agent-1', runId: '0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b' };
const alice = { principal: 'agent:alice', groups: [] };
const LOOKUP = 'tool:tool://crm/lookup_customer';

describe("the worker's ticket MACs", () => {
  it('are the MACs the worker made before: pinned for a fixed key', () => {
    const ticket = new TicketIssuer(key).issue(run, alice, [LOOKUP, 'model:scripted'], [], []);
    expect(ticket.permits).toEqual({ [LOOKUP]: 'GwXJmVBcCpCe4400gPgVkQ', 'model:scripted': 'uwwnt1NR5gq3x2j7ca0h7Q' });
  });

  it('open the permit they were issued for, checked again and again, and nothing beside it', () => {
    const tickets = new TicketIssuer(key);
    const mac = tickets.issue(run, alice, [LOOKUP], [], []).permits[LOOKUP]!;
    for (let i = 0; i < 3; i++) expect(tickets.permits(run, 'agent:alice', LOOKUP, mac)).toBe(true);
    expect(tickets.permits({ ...run, runId: 'another-run' }, 'agent:alice', LOOKUP, mac)).toBe(false);
    expect(tickets.permits({ ...run, workflowId: 'agent-2' }, 'agent:alice', LOOKUP, mac)).toBe(false);
    expect(tickets.permits(run, 'agent:mallory', LOOKUP, mac)).toBe(false);
    expect(tickets.permits(run, 'agent:alice', 'tool:tool://payments/refund', mac)).toBe(false);
    // Fields that read alike once run together are still other fields.
    expect(tickets.permits(run, 'agent:alicetool:', 'tool://crm/lookup_customer', mac)).toBe(false);
    expect(tickets.permits({ workflowId: `agent-1${run.runId}`, runId: '' }, 'agent:alice', LOOKUP, mac)).toBe(false);
    // Another worker with the same key (a replica, or this one restarted) opens it too; another key does not.
    expect(new TicketIssuer(key).permits(run, 'agent:alice', LOOKUP, mac)).toBe(true);
    expect(new TicketIssuer(Buffer.alloc(32, 0x2b)).permits(run, 'agent:alice', LOOKUP, mac)).toBe(false);
  });

  it('still open their permit, and only it, after the worker computed thousands of others since', () => {
    const tickets = new TicketIssuer(key);
    const mac = tickets.issue(run, alice, [LOOKUP], [], []).permits[LOOKUP]!;
    for (let i = 0; i < 5000; i++) tickets.permits({ workflowId: `w-${i}`, runId: 'r' }, 'agent:alice', LOOKUP, mac);
    expect(tickets.permits(run, 'agent:alice', LOOKUP, mac)).toBe(true);
    expect(tickets.permits(run, 'agent:bob', LOOKUP, mac)).toBe(false);
  });
});
