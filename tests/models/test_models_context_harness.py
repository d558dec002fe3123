"""The restricted loader of candidate context harnesses (build_context.py)."""

import pytest

from harness.models.context_harness import (ContextHarness, ContextHarnessError, SandboxedHarness,
                                            check_context_harness, load_context_harness, static_problems)
from harness.models.probes import probe_histories

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


def test_every_violation_the_compiler_finds_is_named_with_its_own_line():
    """A proposal gets one repair: the gate must name every line to fix, not the first twice."""
    source = ("def build_context(history):\n    d = {'a': 0}\n    d['a'] += 1\n    x = 1\n"
              "    d['a'] += 2\n    return str(d)\n")
    assert static_problems(source) == [
        "build_context.py:3: Augmented assignment of object items and slices is not allowed.",
        "build_context.py:5: Augmented assignment of object items and slices is not allowed."]


@pytest.mark.parametrize("body,needle", [
    ("    return str(len([x for x in range(10**8)]))", "iterated more than"),
    ("    return 42", "must return a str"),
    ("    return 'x' * 100000", "limit 20000"),
    ("    math.pi = 3\n    return ''", "may not write to a"),
    ("    return str(1 / 0)", "ZeroDivisionError"),
])
def test_runtime_limits(body, needle):
    harness = ContextHarness(f"def build_context(history):\n{body}\n", max_seconds=60)  # the budget, not the clock
    with pytest.raises(ContextHarnessError, match=needle):
        harness([])


def test_check_runs_generated_probes_in_a_sandbox(tmp_path):
    probes = probe_histories("babyai")
    good = tmp_path / "build_context.py"
    good.write_text(GOOD.replace('item["result"]', 'item.get("outcome") is None').replace(
        'item["subgoal"]', 'item.get("decision")'))
    assert check_context_harness(good, probes) == []
    fails_on_long = tmp_path / "long.py"
    fails_on_long.write_text("def build_context(history):\n    return history[len(history)]['decision'] if len(history) > 100 else ''\n")
    problems = check_context_harness(fails_on_long, probes)
    assert problems and "IndexError" in problems[0] and "long history of 200 rounds" in problems[0]
    crashes = tmp_path / "crash.py"
    crashes.write_text("def build_context(history):\n    return history[0]['decision']\n")
    problems = check_context_harness(crashes, probes)
    assert problems and "IndexError" in problems[0] and "an empty history" in problems[0]
    odd = tmp_path / "odd.py"  # assumes every round has an outcome dict: the odd probes have null ones
    odd.write_text("def build_context(history):\n    return ' '.join(str(len(r['outcome']['actions'])) for r in history)\n")
    problems = check_context_harness(odd, probes)
    assert problems and "TypeError" in problems[0] and "odd values" in problems[0]
    hog = tmp_path / "hog.py"
    hog.write_text("def build_context(history):\n    return 'x' * (10 ** 10)\n")
    problems = check_context_harness(hog, probes)
    assert problems and "out of memory" in problems[0]
    assert check_context_harness(tmp_path / "absent.py") == [f"context harness not found: {tmp_path / 'absent.py'}"]


def test_probes_follow_the_executors_declared_history_format():
    from harness.schemas import validate_instance

    probes = probe_histories("babyai")
    labels = [label for label, _ in probes]
    assert labels[0] == "an empty history" and any("long history" in label for label in labels)
    assert sum("odd values" in label for label in labels) >= 3
    for _, history in probes:
        assert validate_instance("context_history_babyai", history) == []
        assert all(set(r) == {"round", "decision", "outcome", "observation"} for r in history)
    assert any(r["outcome"] is None for _, h in probes for r in h)  # odd: nulls the format allows
    assert probe_histories("no-such-executor")[1][1][0].keys() == {"round", "decision", "outcome", "observation"}


@pytest.mark.parametrize("body,needle", [
    ("    raise SystemExit(3)", "raised SystemExit"),
    ("    raise KeyboardInterrupt()", "raised KeyboardInterrupt"),
    ("    raise GeneratorExit()", "raised GeneratorExit"),
    ("    return str(sum(range(10 ** 11)))", "ran longer than"),
    ("    return str(7 ** (10 ** 7))[:3]", "ran longer than"),
    ("    return str(len('x' * (3 * 10 ** 9)))", "out of memory"),
])
def test_the_sandbox_holds_for_any_code_and_recovers(body, needle):
    harness = SandboxedHarness(f"def build_context(history):\n{body}\n", max_seconds=0.5)
    with pytest.raises(ContextHarnessError, match=needle):
        harness([])
    with pytest.raises(ContextHarnessError, match=needle):  # a fresh sandbox serves the next call
        harness([])
    harness.close()


def test_the_top_level_runs_under_the_limits_and_each_call_gets_a_fresh_module():
    big = SandboxedHarness("BIG = 'x' * (3 * 10 ** 9)\ndef build_context(history):\n    return ''\n")
    with pytest.raises(ContextHarnessError, match="top level failed: MemoryError"):
        big([])
    counter = SandboxedHarness("SEEN = {}\ndef build_context(history):\n"
                               "    SEEN['n'] = SEEN.get('n', 0) + 1\n    return str(SEEN['n'])\n")
    assert [counter([]), counter([{"round": 1}])] == ["1", "1"]
    assert counter.starts == 1
    counter.close()


def test_the_seed_harness_passes_its_checks():
    from harness import PROJECT_ROOT

    path = PROJECT_ROOT / "seeds" / "babyai-llm" / "build_context.py"
    probes = probe_histories("babyai")
    assert check_context_harness(path, probes) == []
    harness = load_context_harness(path)
    assert harness(probes[1][1]).startswith("Subgoals completed so far:")
    harness.close()


def test_candidate_violations_cover_the_graphs_harness_files(tmp_path):
    import json
    import shutil

    from harness import PROJECT_ROOT
    from harness.models.candidate_checks import candidate_violations

    candidate = tmp_path / "candidate"
    shutil.copytree(PROJECT_ROOT / "seeds" / "babyai-llm", candidate)
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


@pytest.mark.parametrize("file", ["../../../../etc/passwd", "/etc/hostname", "prompts/../../outside.py", "missing.py"])
def test_a_harness_file_outside_the_candidate_is_a_violation_not_a_read(file, tmp_path):
    import json
    import shutil

    from harness import PROJECT_ROOT
    from harness.models.candidate_checks import candidate_violations

    candidate = tmp_path / "candidate"
    shutil.copytree(PROJECT_ROOT / "seeds" / "babyai-llm", candidate)
    (tmp_path / "outside.py").write_text("def build_context(history):\n    return ''\n")
    graph = json.loads((candidate / "graph.json").read_text())
    graph["nodes"]["context"]["config"]["file"] = file
    (candidate / "graph.json").write_text(json.dumps(graph))
    violations = [v for v in candidate_violations(candidate) if v["path"] == "graph.json"]
    assert violations and "names no file inside the candidate folder" in violations[0]["message"]


def test_a_sandbox_serves_many_calls():
    harness = SandboxedHarness("def build_context(history):\n    return str(sum(range(300000)))\n")
    for _ in range(12):  # one process serves call after call (the CPU limit moves with each call)
        assert harness([]) == str(sum(range(300000)))
    assert harness.starts == 1
    harness.close()
