"""Undefended baseline and a static over-refusal estimate (no plane): for each benign user task,
run the ground truth on the environment, judge with AgentDojo, and list protected fields whose value
does not appear in the prompt (what a prompt-only `from_sources` rule would refuse)."""

import json
import sys

from agentdojo.functions_runtime import FunctionsRuntime
from agentdojo.task_suite.load_suites import get_suite

from gen_manifest import RULES

suite_name = sys.argv[1] if sys.argv[1:] else "banking"
suite = get_suite("v1.2.1", suite_name)
rt = FunctionsRuntime(suite.tools)
rules = RULES.get(suite_name, {})
ok = 0
refusals = []
for tid, task in sorted(suite.user_tasks.items()):
    env = task.init_environment(suite.load_and_inject_default_environment({}))
    pre = env.model_copy(deep=True)
    for c in task.ground_truth(pre.model_copy(deep=True)):
        rt.run_function(env, c.function, dict(c.args))
        for ptr, rule, why in rules.get(c.function, ("", [], {}))[1]:
            v = c.args.get(ptr[1:])
            if "from_sources" in rule and v is not None and str(v) not in task.PROMPT:
                refusals.append({"task": tid, "tool": c.function, "field": ptr, "value": str(v)[:40]})
    # with the ground truth's answer: tasks that ask a question are judged by it (dojo_server.py `reference`)
    ok += bool(task.utility(task.GROUND_TRUTH_OUTPUT, pre, env, strict=True))
print(json.dumps({"suite": suite_name, "tasks": len(suite.user_tasks), "groundTruthUtility": ok / len(suite.user_tasks),
                  "wouldRefuse": refusals}, indent=1))
