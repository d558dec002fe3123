"""The restricted loader of candidate context harnesses (build_context.py)."""

import pytest

from harness.models.context_harness import (PROBE_HISTORIES, ContextHarness, ContextHarnessError,
                                            check_context_harness, load_context_harness, static_problems)

GOOD = '''
LIMIT = 2

def build_context(history):
    seen = {}
    for item in history:
        seen[item["result"]] = seen.get(item["result"], 0) + 1
    last = [item["subgoal"] for item in history[-LIMIT:]]
    return json.dumps({"counts": seen, "last": last}, sort_keys=True) + " %d" % math.floor(2.7)
'''


def test_a_good_harness_runs_and_sees_a_copy_of_the_history():
    harness = ContextHarness(GOOD)
    history = [{"subgoal": "go to the red ball", "result": "ok"}, {"subgoal": "open a door", "result": "failed"}]
    assert harness(history) == '{"counts": {"failed": 1, "ok": 1}, "last": ["go to the red ball", "open a door"]} 2'
    mutating = ContextHarness("def build_context(history):\n    history.append(1)\n    return str(len(history))\n")
    history = [0]
    assert mutating(history) == "2" and history == [0]


@pytest.mark.parametrize("source,needle", [
    ("import os\ndef build_context(h):\n    return ''\n", "imports are not allowed"),
    ("def build_context(h):\n    return h.__class__.__name__\n", "invalid attribute name"),
    ("def build_context(h):\n    return eval('1')\n", "'eval' is not allowed"),
    ("def build_context(h):\n    return open('/etc/passwd').read()\n", "'open' is not allowed"),
    ("def build_context(h):\n    return getattr(h, 'x')\n", "'getattr' is not allowed"),
    ("def build_context(h):\n    while True:\n        pass\n", "while loops are not allowed"),
    ("class A:\n    pass\ndef build_context(h):\n    return ''\n", "class definitions are not allowed"),
    ("def build_context(h):\n    global X\n    return ''\n", "global are not allowed"),
    ("def build_context(h):\n    _secret = 1\n    return ''\n", "starts with \"_\""),
    ("def other(h):\n    return ''\n", "must define a top-level function build_context"),
    ("def build_context(a, b):\n    return ''\n", "exactly one argument"),
    ("def build_context(h)\n    return ''\n", "syntax error"),
])
def test_violations_are_check_time_errors_naming_the_line(source, needle):
    problems = static_problems(source)
    assert any(needle in p for p in problems), problems
    with pytest.raises(ContextHarnessError, match="context harness rejected"):
        ContextHarness(source)


@pytest.mark.parametrize("body,needle", [
    ("    return str(len([x for x in range(10**8)]))", "iterated more than"),
    ("    return 42", "must return a str"),
    ("    return 'x' * 100000", "limit 20000"),
    ("    math.pi = 3\n    return ''", "writing to a module is not allowed"),
    ("    return str(1 / 0)", "ZeroDivisionError"),
])
def test_runtime_limits(body, needle):
    harness = ContextHarness(f"def build_context(history):\n{body}\n")
    with pytest.raises(ContextHarnessError, match=needle):
        harness([])


def test_check_runs_probes_in_a_limited_process(tmp_path):
    good = tmp_path / "build_context.py"
    good.write_text(GOOD.replace('item["result"]', 'item.get("result")').replace('item["subgoal"]', 'item.get("subgoal")'))
    assert check_context_harness(good) == []
    fails_on_long = tmp_path / "long.py"
    fails_on_long.write_text("def build_context(history):\n    return history[40]['subgoal'] if len(history) > 5 else ''\n")
    problems = check_context_harness(fails_on_long)
    assert problems and "IndexError" in problems[0] and "30 round(s)" in problems[0]
    crashes = tmp_path / "crash.py"
    crashes.write_text("def build_context(history):\n    return history[0]['subgoal']\n")
    problems = check_context_harness(crashes)
    assert problems and "IndexError" in problems[0] and "0 round(s)" in problems[0]
    hog = tmp_path / "hog.py"
    hog.write_text("def build_context(history):\n    return 'x' * (10 ** 10)\n")
    problems = check_context_harness(hog)
    assert problems and "probe run failed" in problems[0]
    assert check_context_harness(tmp_path / "absent.py") == [f"context harness not found: {tmp_path / 'absent.py'}"]


def test_the_seed_harness_passes_its_checks():
    from harness import PROJECT_ROOT

    path = PROJECT_ROOT / "executors" / "babyai" / "seeds" / "babyai-llm" / "build_context.py"
    assert check_context_harness(path) == []
    text = load_context_harness(path)(PROBE_HISTORIES[1])
    assert text.startswith("Subgoals completed so far: 0")


def test_candidate_violations_cover_the_graphs_harness_files(tmp_path):
    import json
    import shutil

    from harness import PROJECT_ROOT
    from harness.models.candidate_checks import candidate_violations

    candidate = tmp_path / "candidate"
    shutil.copytree(PROJECT_ROOT / "executors" / "babyai" / "seeds" / "babyai-llm", candidate)
    assert candidate_violations(candidate) == []
    graph = json.loads((candidate / "graph.json").read_text())
    graph["nodes"]["context"]["config"]["file"] = "harness/ctx.py"
    (candidate / "graph.json").write_text(json.dumps(graph))
    (candidate / "harness").mkdir()
    (candidate / "harness" / "ctx.py").write_text("def build_context(history):\n    return exec('1')\n")
    violations = candidate_violations(candidate)
    assert {v["path"] for v in violations} == {"harness/ctx.py"}
    assert all(v["code"] == "context_harness" for v in violations)
    assert any("'exec' is not allowed" in v["message"] for v in violations)
