"""Writes manifests/<suite>.yaml from the server's tool definitions and the hand-written RULES below.

Schemas and descriptions are copied from the server (the plane compares them on every call);
safety and field rules are the operator's, once per suite, with one line of rationale each.
"""

import json
import os
import sys

from agentdojo.functions_runtime import FunctionsRuntime  # noqa: F401  (venv check)
from agentdojo.task_suite.load_suites import get_suite

P = "user://prompt"
T = "tool://dojo/"
FREE = {"accepts_untrusted": True}
# A value only the user can vouch for (an IBAN in a bill, an address on a page they pointed to): asked, not refused.
ASK = {"principal_confirms": "any"}
# The action itself must be asked for: a call nobody's request names is put to the user, call by call.
ASKED_FOR = {"requires_request": True}


def place(tool, at, **where):
    """A whole value at `at` in `tool`'s results (where the sibling fields hold `where`)."""
    return {"source": T + tool, "at": at, **({"where": where} if where else {})}


# Payees the user has paid or set up (the account's own outgoing records), or named.
PAYEE = {"from_sources": [P, place("get_most_recent_transactions", "/*/recipient", sender="me"),
                          place("get_scheduled_transactions", "/*/recipient")], **ASK}
# Spend cap per payee and run: a worst-case model pays the right payee at most this much.
SPEND = {"spend": {"amount": "/amount", "amount_unit": "major", "currency": "EUR", "payee": "/recipient",
                   "max_minor_per_payee": {"EUR": 500000}}}
# Workspace addresses: named by the user, the user's contacts, or people who wrote to / were written by the user.
ADDRESS = [P, place("search_contacts_by_name", "/*/email"), place("search_contacts_by_email", "/*/email"),
           place("get_received_emails", "/*/sender"), place("get_sent_emails", "/*/recipients/*"),
           place("search_emails", "/*/sender"), place("search_calendar_events", "/*/participants/*"),
           place("get_day_calendar_events", "/*/participants/*")]
FILE_IDS = [P, place("list_files", "/*/id_"), place("search_files_by_filename", "/*/id_"),
            place("search_files", "/*/id_"), place("create_file", "/id_")]
EVENT_IDS = [P, place("search_calendar_events", "/*/id_"), place("get_day_calendar_events", "/*/id_"),
             place("create_calendar_event", "/id_")]
EMAIL_IDS = [P] + [place(t, "/*/id_") for t in ("get_received_emails", "get_sent_emails", "get_unread_emails",
                                                  "get_draft_emails", "search_emails")]
# Slack: users and channels of the workspace's own directory, or named by the user.
# A message's sender and the channel it was posted in are the workspace's own fields, never its body.
SLACK_USERS = [P, place("get_users_in_channel", "/*"), place("read_channel_messages", "/*/sender"),
               place("read_inbox", "/*/sender")]
SLACK_CHANNELS = [P, place("get_channels", "/*"), place("read_channel_messages", "/*/recipient")]

# tool -> (safety, [(pointer, rule, rationale)], {tool-level keys})
RULES = {
    "banking": {
        "send_money": ("mutating", [
            ("/recipient", PAYEE, "money goes to an IBAN the user named, paid before or has a standing order to"),
            ("/amount", FREE, "how much is bounded by who (the payee rule) and the spend cap, not by its origin"),
            ("/subject", FREE, "free text: a memo moves no money"),
            ("/date", FREE, "free text date, no authority"),
        ], SPEND),
        "schedule_transaction": ("mutating", [
            ("/recipient", PAYEE, "a standing payment goes only to a payee the user named or already pays"),
            ("/amount", FREE, "bounded by the payee rule and the spend cap"),
            ("/subject", FREE, "free text memo"),
            ("/date", FREE, "free text date"),
            ("/recurring", FREE, "a flag, bounded by the recipient rule"),
        ], SPEND),
        "update_scheduled_transaction": ("mutating", [
            ("/recipient", PAYEE, "redirecting a payment needs a payee the user named or already pays"),
            ("/amount", FREE, "bounded by the payee rule (an existing order's payee)"),
            ("/id", FREE, "which transaction: read from the account's own list"),
            ("/subject", FREE, "free text memo"),
            ("/date", FREE, "free text date"),
            ("/recurring", FREE, "a flag"),
        ], {}),
        "update_password": ("mutating", [
            ("/password", {"from_sources": [P]}, "credentials come from the user only, never asked about"),
        ], {}),
        "update_user_info": ("mutating", [
            ("/first_name", {"from_sources": [P], **ASK}, "identity data from the user only"),
            ("/last_name", {"from_sources": [P], **ASK}, "identity data from the user only"),
            ("/street", {"from_sources": [P], **ASK}, "an address change redirects mail: user only"),
            ("/city", {"from_sources": [P], **ASK}, "an address change redirects mail: user only"),
        ], {}),
    },
    "workspace": {
        "search_contacts_by_name": ("read_only", [], {"principal_records": ["/*/email"]}),
        "search_contacts_by_email": ("read_only", [], {"principal_records": ["/*/email"]}),
        "list_files": ("read_only", [], {"principal_records": ["/*/id_"]}),
        "search_files_by_filename": ("read_only", [], {"principal_records": ["/*/id_"]}),
        "search_calendar_events": ("read_only", [], {"principal_records": ["/*/id_"]}),
        "get_day_calendar_events": ("read_only", [], {"principal_records": ["/*/id_"]}),
        "send_email": ("mutating", [
            ("/recipients", {"from_sources": ADDRESS, **ASK}, "mail goes to people the user named, knows or corresponds with, or confirms (an address in a document)"),
            ("/cc", {"from_sources": ADDRESS, **ASK}, "as recipients"),
            ("/bcc", {"from_sources": ADDRESS, **ASK}, "as recipients"),
            ("/subject", FREE, "free text"),
            ("/body", FREE, "free text: what is said is bounded by who hears it"),
            ("/attachments", FREE, "attached files go only to the addresses above"),
        ], {}),
        "delete_email": ("mutating", [
            ("/email_id", {"from_sources": EMAIL_IDS}, "an email of the user's own mailbox"),
        ], {}),
        "create_calendar_event": ("mutating", [
            ("/participants", {"from_sources": ADDRESS, **ASK}, "invitations go to people the user named, knows or confirms"),
            ("/title", FREE, "free text"), ("/description", FREE, "free text"), ("/location", FREE, "free text"),
            ("/start_time", FREE, "a time"), ("/end_time", FREE, "a time"),
        ], {"principal_records": ["/id_"]}),
        "cancel_calendar_event": ("mutating", [
            ("/event_id", {"from_sources": EVENT_IDS}, "an event of the user's own calendar"),
        ], {}),
        "reschedule_calendar_event": ("mutating", [
            ("/event_id", {"from_sources": EVENT_IDS}, "an event of the user's own calendar"),
            ("/new_start_time", FREE, "a time"), ("/new_end_time", FREE, "a time"),
        ], {}),
        "add_calendar_event_participants": ("mutating", [
            ("/event_id", {"from_sources": EVENT_IDS}, "an event of the user's own calendar"),
            ("/participants", {"from_sources": ADDRESS, **ASK}, "people the user named, knows or confirms"),
        ], {}),
        "append_to_file": ("mutating", [
            ("/file_id", {"from_sources": FILE_IDS}, "a file of the user's own drive"),
            ("/content", FREE, "free text"),
        ], {}),
        # What the run creates in the user's own drive or calendar is theirs: its id is their record.
        "create_file": ("mutating", [
            ("/filename", FREE, "a new file's name harms nothing"), ("/content", FREE, "free text"),
        ], {"principal_records": ["/id_"]}),
        # Deleting is the user's call: any listed file is theirs, so the action itself must be asked for.
        "delete_file": ("mutating", [
            ("/file_id", {"from_sources": FILE_IDS}, "a file of the user's own drive"),
        ], ASKED_FOR),
        "share_file": ("mutating", [
            ("/file_id", {"from_sources": FILE_IDS}, "a file of the user's own drive"),
            ("/email", {"from_sources": ADDRESS, **ASK}, "shared only with people the user named, knows or confirms"),
            ("/permission", FREE, "bounded by who receives it"),
        ], {}),
    },
    "travel": {
        # The user's passport and card numbers: secret, so no mail (internal at most) carries them.
        "get_user_information": ("read_only", [], {"sensitivity": {"max": "internal", "output": "secret"}}),
        "reserve_hotel": ("mutating", [
            ("/hotel", {"from_sources": [P, place("get_all_hotels_in_city", "/*")]}, "a hotel the user named or the directory lists"),
            ("/start_day", FREE, "a date"), ("/end_day", FREE, "a date"),
        ], {}),
        "reserve_car_rental": ("mutating", [
            ("/company", {"from_sources": [P, place("get_all_car_rental_companies_in_city", "/*")]}, "a listed company"),
            ("/start_time", FREE, "a time"), ("/end_time", FREE, "a time"),
        ], {}),
        "reserve_restaurant": ("mutating", [
            ("/restaurant", {"from_sources": [P, place("get_all_restaurants_in_city", "/*")]}, "a listed restaurant"),
            ("/start_time", FREE, "a time"),
        ], {}),
        "create_calendar_event": ("mutating", [
            ("/participants", {"from_sources": [P]}, "invitations only to people the user named"),
            ("/title", FREE, "free text"), ("/description", FREE, "free text"), ("/location", FREE, "free text"),
            ("/start_time", FREE, "a time"), ("/end_time", FREE, "a time"),
        ], ASKED_FOR),  # an event titled as an injection wants: the action itself must be asked for
        "cancel_calendar_event": ("mutating", [
            ("/event_id", {"from_sources": [P, place("search_calendar_events", "/*/id_"),
                                            place("get_day_calendar_events", "/*/id_")]}, "an event of the user's calendar"),
        ], {}),
        "send_email": ("mutating", [
            ("/recipients", {"from_sources": [P]}, "mail only to addresses the user named"),
            ("/cc", {"from_sources": [P]}, "as recipients"), ("/bcc", {"from_sources": [P]}, "as recipients"),
            ("/subject", FREE, "free text"), ("/body", FREE, "free text, bounded by who hears it"),
            ("/attachments", FREE, "bounded by the recipients"),
        ], {}),
    },
    "slack": {
        "get_channels": ("read_only", [], {"principal_records": ["/*"]}),
        "get_users_in_channel": ("read_only", [], {"principal_records": ["/*"]}),
        # Who wrote a message and where it was posted are the workspace's own fields (its members, its channels).
        "read_channel_messages": ("read_only", [], {"principal_records": ["/*/sender", "/*/recipient"]}),
        "read_inbox": ("read_only", [], {"principal_records": ["/*/sender"]}),
        "send_direct_message": ("mutating", [
            ("/recipient", {"from_sources": SLACK_USERS, **ASK}, "a member of the workspace the user named or whose channel lists them"),
            ("/body", FREE, "free text: the message is what an injection writes, so the action must be asked for"),
        ], ASKED_FOR),
        "send_channel_message": ("mutating", [
            ("/channel", {"from_sources": SLACK_CHANNELS, **ASK}, "a channel of the workspace, or one the user confirms"),
            ("/body", FREE, "free text"),
        ], {}),
        "add_user_to_channel": ("mutating", [
            ("/user", {"from_sources": SLACK_USERS, **ASK}, "a workspace member, or one the user confirms"),
            ("/channel", {"from_sources": SLACK_CHANNELS, **ASK}, "a workspace channel, or one the user confirms"),
        ], {}),
        "invite_user_to_slack": ("mutating", [
            ("/user", {"from_sources": [P], **ASK}, "a new member as the user names them, or confirms"),
            ("/user_email", {"from_sources": [P], **ASK}, "their address from the user, or one they confirm (on a page they pointed to)"),
        ], {}),
        "remove_user_from_slack": ("mutating", [
            ("/user", {"from_sources": [P]}, "removing a member is the user's call"),
        ], {}),
        "post_webpage": ("mutating", [
            ("/url", {"from_sources": [P]}, "what is published, and where, only where the user said"),
            ("/content", FREE, "free text, bounded by the url rule"),
        ], {}),
        # Fetching a page tells its host the run came (and what the URL carries): the user's URL, or one they confirm.
        "get_webpage": ("idempotent", [
            ("/url", {"from_sources": [P], **ASK}, "a page the user named, or one they confirm"),
        ], {}),
    },
}


def main(suite_name):
    suite = get_suite(os.environ.get("DOJO_VERSION", "v1.2.1"), suite_name)
    rules = RULES.get(suite_name, {})
    out = [
        "# yaml-language-server: $schema=../../../manifest.schema.json",
        f"# AgentDojo {suite_name} suite served by eval/agentdojo/dojo_server.py; generated by gen_manifest.py",
        "# (schemas from the server; safety and field rules hand-written there, one rationale each).",
        "version: 1",
        f"name: agentdojo-{suite_name}",
        "servers:",
        "  dojo:",
        "    kind: mcp_stdio",
        "    command: python3  # npm run eval:agentdojo starts its venv's python (agentdojo 0.1.35) relaying to its daemon",
        "    args: [eval/agentdojo/dojo_server.py]",
        "tools:",
    ]
    for fn in suite.tools:
        schema = fn.parameters.model_json_schema()
        schema.pop("title", None)
        safety, fields, extra = rules.get(fn.name, ("read_only", [], {}))
        out.append(f"  - id: tool://dojo/{fn.name}")
        out.append(f"    description: {json.dumps(fn.description)}")
        out.append(f"    input_schema: {json.dumps(schema)}")
        what = {"read_only": "reads only", "idempotent": "reaches out, changes nothing"}.get(safety, "changes the world")
        out.append(f"    safety: {safety}  # {what}")
        out.append(f"    recovery: {'fail' if safety == 'mutating' else 'retry'}")
        out.append("    timeouts: { start_to_close: 30s }")
        for key, value in extra.items():
            out.append(f"    {key}: {json.dumps(value)}")
        if fields:
            out.append("    protected_fields:")
            for ptr, rule, why in fields:
                out.append(f"      - {json.dumps({'pointer': ptr, **rule})}  # {why}")
    os.makedirs(os.path.join(os.path.dirname(__file__), "manifests"), exist_ok=True)
    with open(os.path.join(os.path.dirname(__file__), "manifests", f"{suite_name}.yaml"), "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    for s in sys.argv[1:] or ["banking"]:
        main(s)
