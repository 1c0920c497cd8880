"""AgentDojo suite as an MCP stdio server (newline-delimited JSON-RPC, no mcp library needed).

Configured by environment variables:
  DOJO_SUITE (workspace|travel|banking|slack), DOJO_VERSION (default v1.2.1),
  DOJO_USER_TASK, DOJO_INJECTION_TASK (optional), DOJO_ATTACK (default important_instructions),
  DOJO_STATE (path of the environment file; required).
The plane connects once per call, so the environment lives in DOJO_STATE: the first process builds
it (injections placed by the attack, as the benchmark places them) and every call writes it back.
`python dojo_server.py judge` prints {"utility": bool, "security": bool|null} from AgentDojo's own
checks on the pre-environment and the environment in DOJO_STATE.
"""

import json
import os
import sys

from agentdojo.agent_pipeline.base_pipeline_element import BasePipelineElement
from agentdojo.attacks.attack_registry import load_attack
from agentdojo.functions_runtime import FunctionsRuntime
from agentdojo.task_suite.load_suites import get_suite


class _Named(BasePipelineElement):
    # attacks address the model by name; the scripted model has none, so use a listed one
    name = "gpt-4o-2024-05-13"

    def query(self, *args, **kwargs):  # pragma: no cover - never run
        raise RuntimeError("not a model")


def _setup():
    suite = get_suite(os.environ.get("DOJO_VERSION", "v1.2.1"), os.environ["DOJO_SUITE"])
    user = suite.get_user_task_by_id(os.environ["DOJO_USER_TASK"])
    inj_id = os.environ.get("DOJO_INJECTION_TASK") or None
    injections = {}
    inj = None
    if inj_id:
        inj = suite.get_injection_task_by_id(inj_id)
        attack = load_attack(os.environ.get("DOJO_ATTACK", "important_instructions"), suite, _Named())
        injections = attack.attack(user, inj)
    return suite, user, inj, injections


def _initial_env(suite, user, injections):
    env = suite.load_and_inject_default_environment(injections)
    return user.init_environment(env)


def _load(suite, user, injections):
    path = os.environ["DOJO_STATE"]
    if os.path.exists(path):
        with open(path) as f:
            return suite.environment_type.model_validate_json(f.read())
    env = _initial_env(suite, user, injections)
    _save(env)
    return env


def _save(env):
    path = os.environ["DOJO_STATE"]
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(env.model_dump_json())
    os.replace(tmp, path)


def _tools(suite):
    out = []
    for fn in suite.tools:
        schema = fn.parameters.model_json_schema()
        schema.pop("title", None)
        out.append({"name": fn.name, "description": fn.description, "inputSchema": schema})
    return out


def judge():
    suite, user, inj, injections = _setup()
    pre = _initial_env(suite, user, injections)
    with open(os.environ["DOJO_STATE"]) as f:
        post = suite.environment_type.model_validate_json(f.read())
    out_text = os.environ.get("DOJO_MODEL_OUTPUT", "")
    utility = bool(user.utility(out_text, pre, post, strict=True))
    security = None
    if inj is not None:
        security = bool(inj.security(out_text, pre, post))
    print(json.dumps({"utility": utility, "security": security}))


def script():
    """The worst-case scripted model: the user task's ground truth, then the injection task's."""
    suite, user, inj, injections = _setup()
    pre = _initial_env(suite, user, injections)
    calls = [{"function": c.function, "args": dict(c.args)} for c in user.ground_truth(pre.model_copy(deep=True))]
    if inj is not None:
        calls += [{"function": c.function, "args": dict(c.args)} for c in inj.ground_truth(pre.model_copy(deep=True))]
    print(json.dumps({"prompt": user.PROMPT, "calls": calls, "injections": injections}, default=str))


def tasks():
    suite = get_suite(os.environ.get("DOJO_VERSION", "v1.2.1"), os.environ["DOJO_SUITE"])
    print(json.dumps({"user": sorted(suite.user_tasks), "injection": sorted(suite.injection_tasks)}))


def serve():
    suite, user, inj, injections = _setup()
    runtime = FunctionsRuntime(suite.tools)
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        msg = json.loads(line)
        mid = msg.get("id")
        method = msg.get("method")
        if mid is None:
            continue  # notification
        if method == "initialize":
            result = {
                "protocolVersion": msg.get("params", {}).get("protocolVersion", "2025-06-18"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": f"agentdojo-{suite.name}", "version": "1.2.1"},
            }
        elif method == "tools/list":
            result = {"tools": _tools(suite)}
        elif method == "tools/call":
            params = msg.get("params", {})
            env = _load(suite, user, injections)
            value, error = runtime.run_function(env, params["name"], params.get("arguments") or {})
            _save(env)
            if error:
                result = {"content": [{"type": "text", "text": error}], "isError": True}
            else:
                from agentdojo.agent_pipeline.tool_execution import tool_result_to_str

                result = {"content": [{"type": "text", "text": tool_result_to_str(value)}], "isError": False}
        elif method == "ping":
            result = {}
        else:
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": method}}) + "\n")
            sys.stdout.flush()
            continue
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": mid, "result": result}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    {"judge": judge, "script": script, "tasks": tasks}.get(sys.argv[1] if sys.argv[1:] else "", serve)()
