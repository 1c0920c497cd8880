"""Plays the support desk through the gateway with the Python MCP SDK's own client.

argv: url, mode ('auto' or 'legacy'), then JSON of {headers, calls}; each call is
{name, arguments, key?}. Prints one JSON line: the negotiated protocol version and each
call's result (isError, text, _meta).
"""

import asyncio
import json
import sys

from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


async def main() -> None:
    url, mode, spec = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    http = create_mcp_http_client(headers=spec["headers"])
    out = {"calls": []}
    async with http:
        async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:
            out["protocolVersion"] = getattr(client.session, "protocol_version", None)
            out["tools"] = sorted(t.name for t in (await client.list_tools()).tools)
            for call in spec["calls"]:
                meta = {"idempotencyKey": call["key"]} if "key" in call else None
                r = await client.call_tool(call["name"], call["arguments"], meta=meta)
                text = "".join(getattr(c, "text", "") for c in r.content)
                out["calls"].append({"isError": bool(r.is_error), "text": text, "meta": r.meta or {}})
    print(json.dumps(out))


asyncio.run(main())
