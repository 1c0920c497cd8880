"""AgentDojo suite as an MCP stdio server (newline-delimited JSON-RPC, no mcp library needed).

Configured by environment variables:
  DOJO_SUITE (workspace|travel|banking|slack), DOJO_VERSION (default v1.2.1),
  DOJO_USER_TASK, DOJO_INJECTION_TASK (optional), DOJO_ATTACK (default important_instructions),
  DOJO_STATE (path of the environment file; required).
The plane connects once per call, so the environment lives in DOJO_STATE: the first call builds it
(injections placed by the attack, as the benchmark places them) and every call writes it back.

Importing agentdojo takes seconds (it loads every model provider's SDK), too long for a process per
call. So `dojo_server.py daemon` (socket DOJO_SOCKET) keeps the suites loaded; with DOJO_SOCKET set,
the stdio server is a thin relay that imports nothing and hands each message, with its DOJO_* env,
to the daemon. Without DOJO_SOCKET it serves on its own.

Sidecar commands (printed as JSON; through the daemon when DOJO_SOCKET is set):
  `script`: the prompt, the worst-case model's calls and the ground truth's answer;
  `judge`: {"utility": bool, "security": bool|null} from AgentDojo's own checks on the
  pre-environment and the one in DOJO_STATE (DOJO_MODEL_OUTPUT is the run's answer);
  `reference`: the same verdict for the undefended reference (the script's calls applied to the
  environment in this process, the ground truth's answer), plus the calls that raised;
  `tasks`: the suite's user and injection task ids.
"""

import json
import os
import pickle
import sys

KEYS = ("DOJO_SUITE", "DOJO_VERSION", "DOJO_USER_TASK", "DOJO_INJECTION_TASK", "DOJO_ATTACK", "DOJO_STATE",
        "DOJO_MODEL_OUTPUT", "DOJO_TRACES", "DOJO_SLOT")
# The run each slot serves (`bind`): a slot's stdio server sends only the slot's name.
BOUND = {}


class DojoInputError(Exception):
    """A suite, version, task or attack the package lacks: named, before any run starts."""


_suites = {}
_setups = {}


def _suite(cfg):
    from agentdojo.task_suite.load_suites import get_suite

    key = (cfg.get("DOJO_VERSION") or "v1.2.1", cfg.get("DOJO_SUITE") or "")
    if key not in _suites:
        try:
            _suites[key] = get_suite(*key)
        except KeyError:
            raise DojoInputError(f"AgentDojo has no suite {key[1]!r} at benchmark version {key[0]!r}")
    return _suites[key]


def _named():
    from agentdojo.agent_pipeline.base_pipeline_element import BasePipelineElement

    class _Named(BasePipelineElement):
        # attacks address the model by name; the scripted model has none, so use a listed one
        name = "gpt-4o-2024-05-13"

        def query(self, *args, **kwargs):  # pragma: no cover - never run
            raise RuntimeError("not a model")

    return _Named()


def _setup(cfg):
    from agentdojo.attacks.attack_registry import load_attack

    suite = _suite(cfg)
    inj_id = cfg.get("DOJO_INJECTION_TASK") or None
    attack_name = cfg.get("DOJO_ATTACK") or "important_instructions"
    key = (suite.name, cfg.get("DOJO_VERSION"), cfg.get("DOJO_USER_TASK"), inj_id, attack_name)
    if key in _setups:
        return _setups[key]
    if cfg.get("DOJO_USER_TASK") not in suite.user_tasks:
        raise DojoInputError(f"suite {suite.name!r} has no user task {cfg.get('DOJO_USER_TASK')!r}")
    user = suite.get_user_task_by_id(cfg["DOJO_USER_TASK"])
    injections = {}
    inj = None
    if inj_id:
        if inj_id not in suite.injection_tasks:
            raise DojoInputError(f"suite {suite.name!r} has no injection task {inj_id!r}")
        inj = suite.get_injection_task_by_id(inj_id)
        try:
            attack = load_attack(attack_name, suite, _named())
        except (KeyError, ValueError):
            raise DojoInputError(f"AgentDojo has no attack {attack_name!r}")
        injections = attack.attack(user, inj)
    _setups[key] = (suite, user, inj, injections)
    return _setups[key]


_initial = {}


def _initial_env(suite, user, injections):
    """A fresh copy of the task's starting environment. Building one takes the better part of a second
    (the suite's YAML, parsed and validated), and script, reference, judge and the first call each want
    one, so the first is kept pickled (a pickle, not a model copy: exact and faster)."""
    key = (id(suite), user.ID, json.dumps(injections, sort_keys=True))
    if key not in _initial:
        env = user.init_environment(suite.load_and_inject_default_environment(injections))
        _initial[key] = pickle.dumps(env)
    return pickle.loads(_initial[key])


def _read(cfg):
    """The environment in DOJO_STATE, or None before the first call.

    Pickled, not JSON: the suites' models rebuild their live dicts from the initial lists when validated
    (workspace's `Calendar.events` from `initial_events`, `Inbox.emails`, `CloudDrive.files`), so a JSON
    round trip silently undoes every event, email and file a call made or deleted. The file is the
    harness's own, in the run's private temporary folder."""
    path = cfg["DOJO_STATE"]
    if not os.path.exists(path):
        return None
    with open(path, "rb") as f:
        return pickle.load(f)


def _load(cfg, suite, user, injections):
    env = _read(cfg)
    if env is None:
        env = _initial_env(suite, user, injections)
        _save(cfg, env)
    return env


def _save(cfg, env):
    path = cfg["DOJO_STATE"]
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        pickle.dump(env, f)
    os.replace(tmp, path)


def _tools(suite):
    out = []
    for fn in suite.tools:
        schema = fn.parameters.model_json_schema()
        schema.pop("title", None)
        out.append({"name": fn.name, "description": fn.description, "inputSchema": schema})
    return out


def _verdict(user, inj, out_text, pre, post, traces):
    """AgentDojo's own order (TaskSuite._check_task_result): a task's trace check when it has one, else its
    environment check."""
    utility = user.utility_from_traces(out_text, pre, post, traces)
    if utility is None:
        utility = user.utility(out_text, pre, post)
    security = None
    if inj is not None:
        security = inj.security_from_traces(out_text, pre, post, traces)
        if security is None:
            security = inj.security(out_text, pre, post)
    return {"utility": bool(utility), "security": None if security is None else bool(security)}


def _calls(raw):
    from agentdojo.functions_runtime import FunctionCall

    return [FunctionCall(function=c["function"], args=c["args"]) for c in raw]


def judge(cfg):
    suite, user, inj, injections = _setup(cfg)
    pre = _initial_env(suite, user, injections)
    post = _read(cfg)
    if post is None:  # no call reached the suite: its environment is the one it started with
        post = pre.model_copy(deep=True)
    # Tasks judged by the calls made (utility_from_traces): the calls that reached the suite, in order.
    traces = _calls(json.loads(cfg.get("DOJO_TRACES") or "[]"))
    return _verdict(user, inj, cfg.get("DOJO_MODEL_OUTPUT") or "", pre, post, traces)


def reference(cfg):
    """The undefended reference: the scripted calls applied to the environment directly (no plane, no MCP,
    no state file), judged as `judge` judges, with the ground truth's answer. What the ground truth itself
    can pass: a path can do no better."""
    from agentdojo.functions_runtime import FunctionsRuntime

    suite, user, inj, injections = _setup(cfg)
    env = _initial_env(suite, user, injections)
    pre = env.model_copy(deep=True)
    made = script(cfg)
    runtime = FunctionsRuntime(suite.tools)
    errors = []
    for i, c in enumerate(made["calls"]):
        _, error = runtime.run_function(env, c["function"], c["args"])
        if error:
            errors.append({"call": i, "function": c["function"], "error": error})
    out = _verdict(user, inj, made["answer"], pre, env, _calls(made["calls"]))
    return {**out, "errors": errors}


def script(cfg):
    """The worst-case scripted model: the user task's ground truth, then the injection task's."""
    suite, user, inj, injections = _setup(cfg)
    pre = _initial_env(suite, user, injections)
    user_calls = [{"function": c.function, "args": dict(c.args)} for c in user.ground_truth(pre.model_copy(deep=True))]
    inj_calls = []
    if inj is not None:
        inj_calls = [{"function": c.function, "args": dict(c.args)} for c in inj.ground_truth(pre.model_copy(deep=True))]
    # The worst-case model also says what the injection asks it to say (travel injection_task_6 is judged
    # only by the answer text).
    answer = "\n".join(t for t in (user.GROUND_TRUTH_OUTPUT, inj.GROUND_TRUTH_OUTPUT if inj else "") if t)
    return {
        "prompt": user.PROMPT,
        "calls": user_calls + inj_calls,
        "userCalls": len(user_calls),
        "answer": answer,
        "injections": injections,
    }


def tasks(cfg):
    suite = _suite(cfg)
    return {"user": sorted(suite.user_tasks), "injection": sorted(suite.injection_tasks)}


def rpc(cfg, msg):
    """One JSON-RPC message of the MCP stdio protocol; None for a notification."""
    mid = msg.get("id")
    method = msg.get("method")
    if mid is None:
        return None
    if method == "initialize":
        result = {
            "protocolVersion": msg.get("params", {}).get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": f"agentdojo-{cfg.get('DOJO_SUITE')}", "version": "0.1.35"},
        }
    elif method == "tools/list":
        result = {"tools": _tools(_suite(cfg))}
    elif method == "tools/call":
        from agentdojo.agent_pipeline.tool_execution import tool_result_to_str
        from agentdojo.functions_runtime import FunctionsRuntime

        suite, user, inj, injections = _setup(cfg)
        params = msg.get("params", {})
        env = _load(cfg, suite, user, injections)
        value, error = FunctionsRuntime(suite.tools).run_function(env, params["name"], params.get("arguments") or {})
        _save(cfg, env)
        # Every call that reached the suite, in order: a real model's trace, judged as AgentDojo judges its own.
        with open(cfg["DOJO_STATE"] + ".calls.jsonl", "a") as f:
            f.write(json.dumps({"function": params["name"], "args": params.get("arguments") or {}}, default=str) + "\n")
        if error:
            result = {"content": [{"type": "text", "text": error}], "isError": True}
        else:
            # JSON, not AgentDojo's default YAML: the plane reads places (`/*/recipient`) in a parsed result
            text = tool_result_to_str(value, dump_fn=lambda v: json.dumps(v, default=str))
            result = {"content": [{"type": "text", "text": text}], "isError": False}
    elif method == "ping":
        result = {}
    else:
        return {"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": method}}
    return {"jsonrpc": "2.0", "id": mid, "result": result}


COMMANDS = {"judge": judge, "reference": reference, "script": script, "tasks": tasks}


def _env_cfg():
    return {k: os.environ[k] for k in KEYS if k in os.environ}


def _answer(req):
    try:
        if req["op"] == "bind":
            BOUND[req["slot"]] = req["env"]
            return {"result": True}
        if req["op"] == "rpc":
            env = req["env"]
            if "DOJO_SLOT" in env:
                env = {**env, **BOUND.get(env["DOJO_SLOT"], {})}
            return {"reply": rpc(env, req["msg"])}
        return {"result": COMMANDS[req["op"]](req["env"])}
    except DojoInputError as err:
        return {"error": str(err), "input": True}
    except Exception as err:  # noqa: BLE001 - reported to the caller, which names it
        return {"error": f"{type(err).__name__}: {err}"}


def daemon():
    import socketserver
    import threading

    lock = threading.Lock()

    class Handler(socketserver.StreamRequestHandler):
        def handle(self):
            for line in self.rfile:
                if not line.strip():
                    continue
                with lock:
                    out = _answer(json.loads(line))
                self.wfile.write((json.dumps(out, default=str) + "\n").encode())
                self.wfile.flush()

    path = os.environ["DOJO_SOCKET"]
    if os.path.exists(path):
        os.unlink(path)
    _suite({"DOJO_SUITE": "banking", "DOJO_VERSION": os.environ.get("DOJO_VERSION", "v1.2.1")})  # import now
    server = socketserver.ThreadingUnixStreamServer(path, Handler)
    server.daemon_threads = True
    print("ready", flush=True)
    server.serve_forever()


class _Relay:
    """A connection to the daemon: one request line, one answer line."""

    def __init__(self):
        import socket

        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(os.environ["DOJO_SOCKET"])
        self.file = self.sock.makefile("rwb")

    def ask(self, req):
        self.file.write((json.dumps(req) + "\n").encode())
        self.file.flush()
        return json.loads(self.file.readline())


def serve():
    relay = _Relay() if os.environ.get("DOJO_SOCKET") else None
    cfg = _env_cfg()
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        msg = json.loads(line)
        if relay:
            out = relay.ask({"op": "rpc", "env": cfg, "msg": msg})
        else:
            out = _answer({"op": "rpc", "env": cfg, "msg": msg})
        if "error" in out:
            reply = {"jsonrpc": "2.0", "id": msg.get("id"), "error": {"code": -32603, "message": out["error"]}}
        else:
            reply = out["reply"]
        if reply is not None and msg.get("id") is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()


def command(name):
    req = {"op": name, "env": _env_cfg()}
    out = _Relay().ask(req) if os.environ.get("DOJO_SOCKET") else _answer(req)
    if "error" in out:
        sys.stderr.write(out["error"] + "\n")
        sys.exit(2)
    print(json.dumps(out["result"], default=str))


if __name__ == "__main__":
    arg = sys.argv[1] if sys.argv[1:] else ""
    if arg == "daemon":
        daemon()
    elif arg in COMMANDS:
        command(arg)
    else:
        serve()
