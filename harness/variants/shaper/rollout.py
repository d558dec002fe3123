"""Rollout records: what SHAPER's judge and summariser read about an episode.

Built from an evaluation's `metrics.json` and per-episode logs (one record per
node firing). Per planner step: the observation before, the planner's output,
the actions executed, the observation after and the reward; per episode the
non-visual metadata: commands and their frequencies, action-chunk lengths,
parse errors, runtime errors, steps. The planner is the graph's `llm.Chat`
node, the observations and chunk outcomes come from its history node, the one
whose firings log `observation` and `outcome` unabridged every tick
(`llm.RoundHistory`, or an executor's own such as `mapgpt.RouteHistory`).
Where the planner gets images (an `image` input), each step also keeps the
simulator's camera frames of the tick before and after it (from the log's
`arrays`), as small PNGs for the judge.
"""

from __future__ import annotations

import ast
import base64
import re
from collections import Counter
from pathlib import Path

from harness.evaluation.trace import array_of, read_log
from harness.fileio import read_json
from harness.models.images import png_bytes

PLANNER_TYPE = "llm.Chat"
HISTORY_FIELDS = ("observation", "outcome")  # what a history node logs every tick
COMMAND = re.compile(r"^\s*(go to|pick up|open|put)\b", re.IGNORECASE)
SIMULATOR_ERROR = re.compile(r"node '[^']+' \([^)]*\.Simulator\) raised")
INFRA_ERROR = re.compile(r"ModelCallError|CassetteMiss|infrastructure", re.IGNORECASE)
IMAGE_PORT = "images"  # the simulator's camera frames, one array per camera
JUDGE_IMAGE_SIZE = 128  # frames are halved until no larger: the judge compares, it does not read details
WHOLE_SPLIT = "all"     # the category of episodes whose id has one key


def category(episode_id: str) -> str:
    """The category an episode counts under in regression reports: its first key (BabyAI: its
    level, LIBERO: its suite); an id of one key alone (mapgpt's instr_id) names no category, so
    the whole split is one."""
    head, sep, _ = str(episode_id).partition(":")
    return head if sep else WHOLE_SPLIT


def _observation_text(value) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else str(value)


def _actions(value) -> list:
    if isinstance(value, list):
        return value
    if isinstance(value, str):
        try:
            parsed = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            return [value]
        return parsed if isinstance(parsed, list) else [parsed]
    return []


def frames(firing: dict) -> list[str]:
    """The simulator firing's camera frames (in camera name order) as base64 PNGs."""
    out = []
    for _, value in sorted(((firing.get("outputs") or {}).get(IMAGE_PORT) or {}).items()):
        pixels = array_of(value) if isinstance(value, dict) and "$array" in value else None
        if pixels is not None:
            while max(pixels.shape[:2]) > JUDGE_IMAGE_SIZE:
                pixels = pixels[::2, ::2]
            out.append(base64.b64encode(png_bytes(pixels)).decode("ascii"))
    return out


def _action_text(action) -> str:
    """A discrete action as it is; a continuous one (a vector) with 3 decimals."""
    if isinstance(action, (list, tuple)):
        return "[" + ", ".join(f"{float(v):.3f}" for v in action) + "]"
    return str(action)


def episode_rollout(record: dict, log_path: Path | None) -> dict:
    """One episode's rollout from its metrics record and its firing log."""
    firings = read_log(log_path)[1] if log_path else []
    by_tick: dict[int, dict] = {}
    parse_errors = 0
    runtime_errors: list[str] = []
    for firing in firings:
        tick = int(firing.get("tick") or 0)
        slot = by_tick.setdefault(tick, {})
        own = firing.get("self") or {}
        history = all(key in own for key in HISTORY_FIELDS)
        if history:
            slot["observation"] = _observation_text(own.get("observation"))
            slot["outcome"] = own.get("outcome")
        elif str(firing.get("type")).endswith(".Simulator"):
            slot["frames"] = frames(firing)
        elif firing.get("type") == PLANNER_TYPE:
            slot["sees_images"] = "image" in (firing.get("inputs") or {})
            if firing.get("error"):
                slot["planner"] = own.get("reply") or ""
                slot["parse_error"] = "reply_pattern" in str(firing["error"])
            else:
                slot["planner"] = own.get("reply", "")
        if firing.get("error"):
            if "reply_pattern" in str(firing["error"]):
                parse_errors += 1
            else:
                runtime_errors.append(str(firing["error"]).splitlines()[0][:300])
        if (firing.get("outputs") or {}).get("actions") is not None and not history:
            slot["chunk"] = _actions(firing["outputs"]["actions"])
    steps = []
    ticks = sorted(t for t, slot in by_tick.items() if "planner" in slot)
    for tick in ticks:
        slot, after = by_tick[tick], by_tick.get(tick + 1, {})
        outcome = after.get("outcome") if isinstance(after.get("outcome"), dict) else None
        # the simulator's own account of what ran when its feedback has one (BabyAI), else the chunk sent
        actions = list(outcome["actions"] or []) if outcome and "actions" in outcome else list(slot.get("chunk") or [])
        steps.append({"tick": tick, "observation_before": slot.get("observation"),
                      "planner_output": slot.get("planner", ""), "parse_error": bool(slot.get("parse_error")),
                      "actions": [_action_text(a) for a in actions], "observation_after": after.get("observation"),
                      "reward": 0.0})
        if slot.get("sees_images"):
            steps[-1].update(images_before=slot.get("frames", []), images_after=after.get("frames", []))
    if steps:
        steps[-1]["reward"] = float(record.get("reward") or 0.0)
    commands = Counter()
    for step in steps:
        match = COMMAND.match(step["planner_output"] or "")
        commands[match.group(1).lower() if match else "(unparsed)"] += 1
    metrics = record.get("metrics") or {}
    error = record.get("error")
    if error and "reply_pattern" not in str(error):
        first = str(error).splitlines()[0][:300]
        if first not in runtime_errors:
            runtime_errors.append(first)
    return {
        "episode_id": str(record["episode_id"]),
        "category": category(record["episode_id"]),
        "mission": str(metrics.get("mission") or metrics.get("instruction") or ""),
        "success": bool(record.get("success")),
        "reward": float(record.get("reward") or 0.0),
        "termination": str(record.get("termination") or ""),
        "steps": steps,
        "meta": {
            "commands": dict(sorted(commands.items())),
            "subgoals": dict(sorted(Counter(s["planner_output"] for s in steps).items())),
            "chunk_lengths": [len(s["actions"]) for s in steps],
            "parse_errors": parse_errors,
            "runtime_errors": runtime_errors,
            "env_steps": int(record.get("steps") or 0),
            "planner_steps": len(steps),
        },
    }


def rollouts_from_evaluation(out_dir: Path) -> list[dict]:
    """Every episode of an evaluation folder (metrics.json + episodes/*.jsonl), in tier order."""
    metrics = read_json(Path(out_dir) / "metrics.json")
    out = []
    for record in metrics["episodes"]:
        log = Path(out_dir) / record["log"] if record.get("log") else None
        out.append(episode_rollout(record, log if log and log.is_file() else None))
    return out


def classify_evaluation(metrics: dict) -> tuple[str, str | None]:
    """("ok", None), ("incomparable", why) for a rollout the simulator itself made
    invalid, or ("infrastructure", why) when workers or model endpoints failed."""
    for record in metrics.get("episodes", []):
        if record.get("infra_error"):
            return "infrastructure", f"episode {record['episode_id']}: {str(record['infra_error']).splitlines()[0]}"
        error = str(record.get("error") or "")
        if INFRA_ERROR.search(error):
            return "infrastructure", f"episode {record['episode_id']}: model call failed: {_last_line(error)}"
    if not metrics.get("complete", True):
        return "infrastructure", "evaluation incomplete (infrastructure failures)"
    for record in metrics.get("episodes", []):
        if SIMULATOR_ERROR.search(str(record.get("error") or "")):
            return "incomparable", f"episode {record['episode_id']}: the simulator failed: " \
                                   f"{_last_line(str(record['error']))}"
    return "ok", None


def _last_line(text: str, head: int = 200, tail: int = 400) -> str:
    """The error's last line; a long one keeps its start and its end (where the advice is)."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    line = lines[-1] if lines else text
    return line if len(line) <= head + tail else f"{line[:head]} … {line[-tail:]}"


def episode_scores(metrics: dict) -> dict:
    """{episode_id: {"reward", "success"}} of an evaluation."""
    return {str(r["episode_id"]): {"reward": float(r.get("reward") or 0.0), "success": bool(r.get("success"))}
            for r in metrics.get("episodes", [])}
