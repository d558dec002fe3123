"""`architect episode --ticks A:B --node NAME`: a long trace narrowed to a tick
range and some nodes, values whole, with `ticks_total` and `size` saying what
was left out; bad ranges and unknown nodes refused with one line."""

from __future__ import annotations

import json

from click.testing import CliRunner
from rundir_kit import cli

from harness.cli import main


def _episode(run_dir):
    metrics = json.loads((run_dir / "iterations" / "0" / "eval" / "metrics.json").read_text())
    return max(metrics["episodes"], key=lambda e: e["ticks"])["episode_id"]


def test_ticks_and_node_narrow_the_trace_and_size_says_what_was_left_out(run_dir):
    ep = _episode(run_dir)
    full = cli("episode", str(run_dir), "0", ep, "--max-bytes", "0")
    total = full["ticks_total"]
    assert total == len(full["ticks"]) >= 4 and full["size"]["bytes"] == full["size"]["bytes_unfiltered"]
    node = full["ticks"][1]["nodes"][0]["node"]
    part = cli("episode", str(run_dir), "0", ep, "--ticks", f"1:{total - 2}", "--node", node, "--max-bytes", "0")
    assert [t["tick"] for t in part["ticks"]] == [t["tick"] for t in full["ticks"][1:total - 1]]
    for narrow, whole in zip(part["ticks"], full["ticks"][1:]):
        assert narrow["nodes"] == [n for n in whole["nodes"] if n["node"] == node]  # values whole
        assert narrow["observation"] is None and narrow["actions"] == whole["actions"]
    assert part["ticks_total"] == total and part["size"]["ticks"] == total - 2
    assert part["size"]["firings"] == sum(len(t["nodes"]) for t in part["ticks"])
    assert part["size"]["firings_total"] == sum(len(t["nodes"]) for t in full["ticks"])
    assert part["size"]["bytes"] < part["size"]["bytes_unfiltered"] == full["size"]["bytes"]
    tail = cli("episode", str(run_dir), "0", ep, "--ticks", f"{total - 1}:")
    assert [t["tick"] for t in tail["ticks"]] == [full["ticks"][-1]["tick"]]
    assert tail["ticks"][0] == full["ticks"][-1]


def test_arrays_shape_leaves_the_bytes_out_and_the_episode_names_its_caps(run_dir):
    ep = _episode(run_dir)
    full = cli("episode", str(run_dir), "0", ep, "--max-bytes", "0")
    assert full["episode"]["episode_id"] == ep and full["episode"]["max_steps"] == full["episode"]["max_steps"] > 0
    shapes = cli("episode", str(run_dir), "0", ep, "--arrays", "shape", "--max-bytes", "0")
    text = json.dumps(shapes["ticks"])
    assert '"base64"' in json.dumps(full["ticks"]) and '"base64"' not in text and '"$array"' in text
    assert '"shape"' in text and shapes["size"]["bytes"] < full["size"]["bytes"] == shapes["size"]["bytes_unfiltered"]
    assert [t["actions"] for t in shapes["ticks"]] == [t["actions"] for t in full["ticks"]]


def test_bad_filters_are_refused_with_one_line(run_dir):
    ep = _episode(run_dir)
    for args, message in ((["--ticks", "5"], "give A:B"), (["--ticks", "900:901"], "the episode has ticks 0.."),
                          (["--node", "nowhere"], "--node nowhere: not a node"),
                          (["--tick", "1", "--ticks", "1:2"], "not both")):
        out = cli("episode", str(run_dir), "0", ep, *args, ok=False)
        assert out["ok"] is False and out["_exit_code"] != 0 and message in out["error"], (args, out)


def test_a_trace_over_max_bytes_is_refused_with_its_size_and_the_ways_to_narrow_it(run_dir):
    ep = _episode(run_dir)
    full = cli("episode", str(run_dir), "0", ep, "--max-bytes", "0")
    size, shapes = full["size"]["bytes"], cli("episode", str(run_dir), "0", ep, "--arrays", "shape", "--max-bytes", "0")["size"]["bytes"]
    out = cli("episode", str(run_dir), "0", ep, "--max-bytes", str(size - 1), ok=False)
    assert out["ok"] is False and out["_exit_code"] != 0
    assert f"{size:,} bytes, over --max-bytes {size - 1:,}" in out["error"]
    assert f"--arrays shape ({shapes:,} bytes" in out["error"] and "--ticks A:B (it has ticks 0.." in out["error"]
    assert "fit" in out["error"].split("--ticks A:B")[1].split(";")[0] and "--max-bytes 0" in out["error"]
    shares = out["error"].split("--node NAME, repeatable (bytes of each one's outputs over these ticks: ")[1]
    names = {n["node"] for t in full["ticks"] for n in t["nodes"]}
    assert names and all(f"{name} " in shares.split(";")[0] for name in names)
    assert cli("episode", str(run_dir), "0", ep, "--max-bytes", str(size))["size"]["bytes"] == size
    assert cli("episode", str(run_dir), "0", ep, "--max-bytes", "0")["size"]["bytes"] == size
    narrowed = cli("episode", str(run_dir), "0", ep, "--arrays", "shape", "--max-bytes", str(size - 1))
    assert narrowed["size"]["bytes"] == shapes


def test_with_json_the_default_limit_is_what_a_coding_agent_sees_of_one_output(run_dir, monkeypatch):
    from harness.cli import evidence_cmds

    ep = _episode(run_dir)
    size = cli("episode", str(run_dir), "0", ep, "--max-bytes", "0")["size"]["bytes"]
    assert evidence_cmds.JSON_TRACE_MAX_BYTES == 30_000 < evidence_cmds.TRACE_MAX_BYTES
    monkeypatch.setattr(evidence_cmds, "JSON_TRACE_MAX_BYTES", size - 1)
    refused = cli("episode", str(run_dir), "0", ep, ok=False)
    assert refused["_exit_code"] != 0 and f"over --max-bytes {size - 1:,}" in refused["error"]
    as_text = CliRunner().invoke(main, ["episode", str(run_dir), "0", ep], catch_exceptions=False)
    assert as_text.exit_code == 0 and "tick 0" in as_text.stdout
    monkeypatch.setattr(evidence_cmds, "TRACE_MAX_BYTES", size - 1)
    as_text = CliRunner().invoke(main, ["episode", str(run_dir), "0", ep], catch_exceptions=False)
    assert as_text.exit_code != 0 and f"over --max-bytes {size - 1:,}" in as_text.output
