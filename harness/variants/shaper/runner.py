"""Headless SHAPER: create or resume a run of a seed, start the scripted stand-ins
when asked, and drive the search under the run lock. `loop_headless` is the
variant's headless driver (`architect loop shaper <seed>`): it returns the
result to the command, which prints it."""

from __future__ import annotations

import json
import os
from contextlib import contextmanager
from pathlib import Path

from harness.envvars import temporary_environ
from harness.errors import UserError
from harness.fileio import read_json
from harness.models.client import BASE_URL_ENV
from harness.rundir import state as run_state
from harness.rundir.create import init_run
from harness.rundir.layout import RunPaths
from harness.rundir.lock import run_lock
from harness.rundir.recover import finish_cut_short, recover
from harness.rundir.run import Run
from harness.rundir.stage import clear_stale
from harness.variants.shaper import beam as beams
from harness.variant_api import HeadlessResult
from harness.variants.shaper.config import ROLES, ShaperConfig, build_config, read_config_file
from harness.variants.shaper.models import CostMeter, Roles, fingerprint, profile_paths
from harness.variants.shaper.optimizer import FILES
from harness.variants.shaper.rollout import episode_scores
from harness.variants.shaper.search import Search, commit_memory
from harness.variants.shaper.store import ShaperFiles

VARIANT = "shaper"


def resolve(name: str) -> tuple[str, Path]:
    """A seed name (`babyai-llm`) or an executor name -> (executor name, seed folder)."""
    from harness.executor_api import resolve_seed

    spec, seed = resolve_seed(name)
    return spec.name, spec.seed_dir(seed)


def _splits(executor_name: str) -> dict:
    from harness.executor_api import load_executor

    splits = load_executor(executor_name).profile.get("splits")
    if not splits:
        raise UserError(f"executor {executor_name!r} declares no train/validation/test splits: add `splits:` "
                        f"to its profile.yaml (see schemas/profile.schema.json)")
    return splits


def _stand_in_planner(executor_name: str):
    from harness.executor_api import find_executor, load_ref

    ref = find_executor(executor_name).stand_in_planner
    if ref is None:
        raise UserError(f"executor {executor_name!r} offers no stand-in planner (`stand_in_planner` in its spec): "
                        "run without --scripted-models, with a model endpoint")
    return load_ref(ref)


@contextmanager
def model_endpoint(config: ShaperConfig, executor_name: str, base_url: str | None = None):
    """Yield the base URL every model call goes to (None: each profile's own). With
    `scripted_models` and no URL given, a loopback server of scripted stand-ins runs
    meanwhile, its planner the one the executor offers (`stand_in_planner`)."""
    server = None
    if config.scripted_models and base_url is None:
        base_url = os.environ.get(BASE_URL_ENV)  # an operator's (or a test's) stand-in server wins
    if config.scripted_models and base_url is None:
        from harness.variants.shaper.stand_ins import stand_in_server

        from harness.evaluation.warm import keep_private

        server = stand_in_server(_stand_in_planner(executor_name), delay_s=config.model_delay_s).start()
        base_url = server.openai_url
        keep_private()  # a warm forkserver keyed by this one-off URL would serve no later command
    try:
        with temporary_environ(**({BASE_URL_ENV: base_url} if base_url is not None else {})):
            yield base_url
    finally:
        if server is not None:
            server.stop()


def create_run(seed_name: str, config: ShaperConfig, *, runs_dir: Path, run_id: str | None, say) -> RunPaths:
    """A new run: iteration 0 is the seed (smoke + validation split), then memory/shaper/beam.json."""
    executor_name, seed_dir = resolve(seed_name)
    splits = _splits(executor_name)
    graph = json.loads((seed_dir / "graph.json").read_text(encoding="utf-8"))
    roles = profile_paths(config, graph.get("model_profile"), seed_dir)
    for name in FILES.values():
        if not (seed_dir / name).is_file():
            raise UserError(f"seed {seed_name!r} has no {name}: SHAPER evolves {' and '.join(FILES.values())}")
    cap = config.proposals_in_schedule()
    paths = init_run(VARIANT, seed_name, runs_dir=Path(runs_dir), run_id=run_id, max_iterations=cap,
                     max_skips=cap + 1, smoke_episodes=config.smoke_episodes, eval_episodes=config.val_episodes,
                     seed=config.seed, say=say, performance_tier=splits["validation"])
    candidate = paths.iteration(0) / "candidate"
    texts = {kind: (candidate / name).read_text(encoding="utf-8") for kind, name in FILES.items()}
    scores = episode_scores(read_json(paths.iteration(0) / "eval" / "metrics.json"))
    rewards = {e: s["reward"] for e, s in scores.items()}
    cid = beams.candidate_id(texts["skill"], texts["harness"])
    planner = graph.get("model_profile")
    pinned = {role: {"path": path, "sha256": fingerprint(path)} for role, path in roles.items()}
    if planner:
        from harness.models import resolve_profile_path

        path = str(resolve_profile_path(planner["path"], seed_dir))
        pinned["planner"] = {"path": path, "sha256": fingerprint(path)}
    ShaperFiles(paths.memory).write_beam({
        "schema_version": 1, "seed": seed_name, "config": config.to_dict(), "profiles": pinned,
        "phase": "search" if config.rounds else "final", "round": 1, "beam": [cid], "stage_start": cid,
        "selected": {"skill": None, "harness": None},
        "candidates": {cid: {"id": cid, "skill": beams.text_sha(texts["skill"]),
                             "harness": beams.text_sha(texts["harness"]), "iteration": 0, "parent": None,
                             "stage": "seed", "round": 0, "status": "evaluated", "reason": None,
                             "rewards": rewards, "successes": {e: s["success"] for e, s in scores.items()},
                             "mean_reward": round(beams.mean_reward(rewards), 6)}},
        "proposals": [], "rounds": [], "costs": {"by_round": {}, "total_usd": 0.0},
        "texts": {beams.text_sha(t): t for t in texts.values()}, "seen": [cid]})
    return paths


def latest_run(runs_dir: Path, seed_name: str) -> str | None:
    found = []
    for beam_file in Path(runs_dir).glob("*/memory/shaper/beam.json"):
        try:
            data = json.loads(beam_file.read_text(encoding="utf-8"))
            manifest = json.loads((beam_file.parents[2] / "manifest.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if data.get("seed") == seed_name:
            found.append((str(manifest.get("created", "")), beam_file.parents[2].name))
    return max(found)[1] if found else None


def stored_config(paths: RunPaths) -> ShaperConfig:
    return ShaperConfig(**ShaperFiles(paths.memory).read_beam()["config"])


def drive(paths: RunPaths, *, base_url: str | None, say) -> dict:
    """Run the search on an existing SHAPER run until its schedule is done (or STOP)."""
    with run_lock(paths.lock):
        for action in recover(paths):
            say(f"recovered: {action}")
        run = Run(paths)
        for name in clear_stale(run):
            say(f"removed stale staging {name}")
        beam = ShaperFiles(paths.memory).read_beam()
        for role, pin in beam["profiles"].items():
            if fingerprint(pin["path"]) != pin["sha256"]:
                raise UserError(f"the pinned {role} profile {pin['path']} changed since the run began; "
                                "restore it (a run keeps its models)")
        meter = CostMeter(beam["costs"]["by_round"])
        roles = Roles({role: beam["profiles"][role]["path"] for role in ROLES}, meter, base_url=base_url)
        run_state.refresh(paths, status="running", stop_reason=None)
        reason, search = "error", None
        try:
            search = Search(run, roles, meter, say=say)
            reason = search.run_all()
        except UserError as exc:
            reason = f"error: {exc.message}"
            raise
        except BaseException as exc:
            reason = f"error: {type(exc).__name__}: {exc}"
            raise
        finally:
            roles.close()
            finish_cut_short(paths)
            run_state.refresh(paths, status="stopped", stop_reason=reason)
            commit_memory(run, f"shaper: memory after the loop stopped ({reason[:60]})")
    return dict(summary(paths, reason), timings=search.timings)


def summary(paths: RunPaths, reason: str) -> dict:
    files = ShaperFiles(paths.memory)
    beam = files.read_beam()
    run = Run(paths)
    final = files.read("shaper_final", files.final)
    return {"ok": True, "run": str(paths.root), "run_id": paths.run_id, "stop_reason": reason,
            "phase": beam["phase"], "round": beam["round"], "beam": beam["beam"], "selected": beam["selected"],
            "iterations": len(run.committed_iterations()) - 1, "cap": run.manifest["caps"]["max_iterations"],
            "costs": beam["costs"], "final": final["splits"] if final else None}


def run_headless(seed_name: str, *, runs_dir: Path, run_id: str | None = None, resume: bool = False,
                 config: ShaperConfig | None = None, base_url: str | None = None, say=lambda text: None) -> dict:
    """`architect loop shaper <seed>`: a new run (with `config`) or the resumed one."""
    runs_dir = Path(runs_dir)
    paths = None
    if resume:
        run_id = run_id or latest_run(runs_dir, seed_name)
        if run_id is None:
            raise UserError(f"--resume: no shaper run of {seed_name} under {runs_dir}; name one with --run-id")
        if not (runs_dir / run_id / "manifest.json").is_file():
            raise UserError(f"--resume: no run {run_id} under {runs_dir}")
        paths = RunPaths((runs_dir / run_id).resolve())
        if config is not None:
            raise UserError("--config applies to a new run; a resumed run keeps the configuration it began with")
        config = stored_config(paths)
        say(f"resuming {paths.run_id} at round {ShaperFiles(paths.memory).read_beam()['round']}")
    elif run_id and (runs_dir / run_id).exists():
        raise UserError(f"{runs_dir / run_id} already exists: pass --resume to continue it, or another --run-id")
    config = config or ShaperConfig()
    with model_endpoint(config, resolve(seed_name)[0], base_url) as url:
        if paths is None:
            paths = create_run(seed_name, config, runs_dir=runs_dir, run_id=run_id, say=say)
            say(f"run {paths.run_id}: iteration 0 (the seed) committed; schedule of up to "
                f"{config.proposals_in_schedule()} proposals")
        return drive(paths, base_url=url if config.scripted_models or base_url else None, say=say)


def loop_headless(seed_name: str, *, run_id, resume, config_path, scripted_models, seed, smoke_episodes,
                  eval_episodes, runs_dir: Path, say) -> HeadlessResult:
    """The headless driver: a new run configured by the YAML at `config_path` and the loop's
    options, or the resumed one (which keeps its configuration)."""
    config = None
    if not resume:
        data = read_config_file(config_path) if config_path else {}
        config = build_config(data, scripted_models=True if scripted_models else None, seed=seed,
                              smoke_episodes=smoke_episodes, val_episodes=eval_episodes)
    elif config_path or scripted_models:
        raise UserError("--config and --scripted-models apply to a new run; a resumed run keeps its configuration")
    result = run_headless(seed_name, runs_dir=runs_dir, run_id=run_id, resume=resume, config=config, say=say)
    text = (f"run {result['run_id']} stopped: {result['stop_reason']}; {result['iterations']} iteration(s) "
            f"(cap {result['cap']}); beam {', '.join(result['beam'])}; total cost ${result['costs']['total_usd']:.4f}\n"
            f"run: {result['run']}")
    return HeadlessResult(result, text)
