"""`architect shaper …`: the helpers behind the SHAPER proposer skill, its
deterministic parts (rollouts, minibatch sampling, gradient assembly, the
sandbox gate, proposal bookkeeping with dedupe, validation as run iterations,
beam update and stage switching, the final test evaluation, costs). All take
--json. The headless run (`architect loop shaper <seed>`) is `runner.py`'s."""

from __future__ import annotations

import json
from pathlib import Path

import click

from harness.cli.conventions import JSON_OPTION, RUNS_DIR_OPTION, UserError, emit, handled, progress_say


@click.group("shaper")
def shaper_group() -> None:
    """SHAPER helpers: co-evolve a frozen planner's skill and context harness.

    Headless: `architect loop shaper <seed>`. In Claude Code the coding agent
    plays judge, summariser and optimizer and calls these helpers for the
    deterministic parts (skill: .claude/commands/architect/variants/shaper.md)."""


def _open(run: str, runs_dir):
    from harness.rundir.run import open_run

    return open_run(run, runs_dir)


def _search(opened, say=lambda text: None):
    from harness.variants.shaper.models import CostMeter
    from harness.variants.shaper.search import Search
    from harness.variants.shaper.store import ShaperFiles

    meter = CostMeter(ShaperFiles(opened.paths.memory).read_beam()["costs"]["by_round"])
    return Search(opened, roles=None, meter=meter, say=say)


def _planner_endpoint(search):
    """While the command runs: the planner's endpoint of a run begun with --scripted-models
    (the executor's stand-in planner on a loopback server), else the pinned profile's own."""
    from harness.variants.shaper.runner import model_endpoint, resolve

    return model_endpoint(search.config, resolve(search.state["seed"])[0])


def _current(search) -> tuple[int, str]:
    if search.state["phase"] != "search":
        raise UserError(f"the search phase is over (phase {search.state['phase']}): run `architect shaper final` "
                        "or read `architect shaper status`")
    r = search.state["round"]
    return r, search.config.stage_of(r)


def next_step(search) -> str:
    state = search.state
    if state["phase"] == "final":
        return "final"
    if state["phase"] == "done":
        return "done"
    r = state["round"]
    made = {p["id"] for p in state["proposals"] if p["round"] == r}
    wanted = {f"r{r}-{c}-b{b}" for c in state["beam"] for b in range(1, search.config.branching + 1)}
    if not all(search.files.gradient(r, c).is_file() for c in state["beam"]):
        return "gradient"
    if wanted - made:
        return "propose"
    if any(p["status"] in ("proposed",) or (p["status"] == "rejected" and not p["logged"])
           for p in state["proposals"] if p["round"] == r):
        return "validate"
    return "advance"


@shaper_group.command("init")
@click.argument("seed")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="YAML of SHAPER settings (beam_width, branching, rounds, skill_rounds, minibatch, ...).")
@click.option("--run-id", default=None)
@click.option("--scripted-models", is_flag=True,
              help="No model endpoint: the planner is the executor's scripted stand-in on a loopback server, "
                   "started by each command of the run that rolls out episodes (init, minibatch, validate, final).")
@RUNS_DIR_OPTION
@JSON_OPTION
@handled
def init_cmd(seed, config_path, run_id, scripted_models, runs_dir, as_json):
    """Create a SHAPER run of SEED: iteration 0 is the seed (smoke and validation split)."""
    from harness.rundir.layout import default_runs_dir
    from harness.variants.shaper.config import build_config, read_config_file
    from harness.variants.shaper.runner import create_run, model_endpoint, resolve

    config = build_config(read_config_file(config_path) if config_path else {},
                          **({"scripted_models": True} if scripted_models else {}))
    with model_endpoint(config, resolve(seed)[0]):
        paths = create_run(seed, config, runs_dir=runs_dir or default_runs_dir(), run_id=run_id, say=progress_say())
    with _open(str(paths.root), None) as opened:
        step = next_step(_search(opened))
    emit({"ok": True, "run": str(paths.root), "run_id": paths.run_id, "cap": config.proposals_in_schedule(),
          "next": step}, as_json, human=str(paths.root))


@shaper_group.command("status")
@click.argument("run")
@RUNS_DIR_OPTION
@JSON_OPTION
@handled
def status_cmd(run, runs_dir, as_json):
    """Phase, round, stage, beam (with validation means), selections, costs and the next step."""
    with _open(run, runs_dir) as opened:
        search = _search(opened)
        state = search.state
        beam = [{"candidate": c, "mean_reward": state["candidates"][c]["mean_reward"],
                 "iteration": state["candidates"][c]["iteration"]} for c in state["beam"]]
        payload = {"ok": True, "phase": state["phase"], "round": state["round"],
                   "stage": search.config.stage_of(state["round"]) if state["phase"] == "search" else None,
                   "beam": beam, "selected": state["selected"], "costs": state["costs"], "next": next_step(search),
                   "branching": search.config.branching, "beam_width": search.config.beam_width,
                   "scripted_models": search.config.scripted_models, "beam_file": str(search.files.beam)}
    emit(payload, as_json, human="\n".join(f"{k}: {v}" for k, v in payload.items()))


@shaper_group.command("minibatch")
@click.argument("run")
@click.option("--candidate", required=True, help="Beam candidate id (see `architect shaper status`).")
@RUNS_DIR_OPTION
@JSON_OPTION
@handled
def minibatch_cmd(run, candidate, runs_dir, as_json):
    """Draw this round's minibatch of CANDIDATE and roll it out (kept in memory/shaper/rollouts/):
    the study's rule rolls out a fresh draw of train episodes each round, the paired rule the
    whole train split once. Prints the steps to judge and the episodes to summarise."""
    with _open(run, runs_dir) as opened:
        search = _search(opened, progress_say())
        r, stage = _current(search)
        if candidate not in search.state["beam"]:
            raise UserError(f"--candidate {candidate}: not in the beam ({', '.join(search.state['beam'])})")
        with _planner_endpoint(search):
            chosen, episodes = search.minibatch(candidate, r, stage)
        search.save()
        payload = {"ok": True, "round": r, "stage": stage, "candidate": candidate, "minibatch": chosen,
                   "rollouts": str(search.rollout_file(candidate, r)),
                   "steps_to_judge": {e["episode_id"]: min(len(e["steps"]), search.config.max_judged_steps)
                                      for e in episodes}}
    emit(payload, as_json)


@shaper_group.command("gradient")
@click.argument("run")
@click.option("--candidate", required=True)
@click.option("--judgements", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="JSON {episode_id: [{step, verdict, note}, ...]} (verdicts: progress, no_progress, "
                   "wrong_subgoal, executor_mismatch, parse_error).")
@click.option("--summaries", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="JSON {episode_id: summary text}.")
@RUNS_DIR_OPTION
@JSON_OPTION
@handled
def gradient_cmd(run, candidate, judgements, summaries, runs_dir, as_json):
    """Assemble CANDIDATE's gradient for this round from the judge's and summariser's texts plus
    aggregate statistics; writes memory/shaper/gradients/r<round>-<candidate>.json, and
    memory/shaper/history/r<round>.txt: what the optimizer is told of earlier rounds."""
    from harness.fileio import write_text_atomic
    from harness.variants.shaper.gradient import assemble
    from harness.variants.shaper.prompts import parse_judgement

    with _open(run, runs_dir) as opened:
        search = _search(opened)
        r, stage = _current(search)
        if search.files.read("shaper_rollout", search.rollout_file(candidate, r)) is None:
            raise UserError(f"no train rollouts of {candidate}: run `architect shaper minibatch {run} "
                            f"--candidate {candidate}` first")
        chosen, episodes = search.minibatch(candidate, r, stage)
        judged, summary = json.loads(judgements.read_text()), json.loads(summaries.read_text())
        missing = [e for e in chosen if e not in summary]
        if missing:
            raise UserError(f"{summaries}: no summary of episode(s) {', '.join(missing)}")
        cleaned = {}
        for episode_id in chosen:
            rows = judged.get(episode_id, [])
            if not isinstance(rows, list):
                raise UserError(f"{judgements}: {episode_id} must map to a list of judgements")
            cleaned[episode_id] = [dict(parse_judgement(f"VERDICT: {j.get('verdict')}\nNOTE: {j.get('note', '')}"),
                                        step=int(j["step"])) for j in rows]
        record = {"round": r, "stage": stage, "candidate": candidate, "minibatch": chosen, "cost_usd": 0.0,
                  **assemble(episodes, cleaned, summary)}
        search.files.write("shaper_gradient", search.files.gradient(r, candidate), record)
        history = search.files.history(r)
        history.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(history, "".join(f"{line}\n" for line in search.history(r)))
    emit({"ok": True, "gradient": str(search.files.gradient(r, candidate)), "history": str(history),
          "stats": record["stats"]}, as_json)


@shaper_group.command("gate")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@JSON_OPTION
@handled
def gate_cmd(file, as_json):
    """The sandbox gate of a context-harness proposal (exit 1 with the problems when rejected)."""
    from harness.variants.shaper.optimizer import sandbox_problems

    problems = sandbox_problems(file.read_text(encoding="utf-8"))
    emit({"ok": not problems, "problems": problems}, as_json, human="\n".join(problems) or "accepted")
    if problems:
        raise SystemExit(1)


@shaper_group.command("propose")
@click.argument("run")
@click.option("--parent", required=True, help="Beam candidate the proposal rewrites.")
@click.option("--branch", type=click.IntRange(min=1), required=True)
@click.option("--file", "file", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="The complete new artefact of this stage (skill.md or build_context.py text).")
@click.option("--rejected", "rejected_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Harness stage, repair attempt: the JSON this command printed for the rejected attempt.")
@RUNS_DIR_OPTION
@JSON_OPTION
@handled
def propose_cmd(run, parent, branch, file, rejected_file, runs_dir, as_json):
    """Record a proposal of this round (the frozen artefact is taken from the parent, whatever the file).
    A harness proposal the sandbox rejects is not recorded the first time: fix it and call again with
    --rejected (one repair); a second rejection records it as rejected."""
    from harness.variants.shaper.optimizer import sandbox_problems

    with _open(run, runs_dir) as opened:
        search = _search(opened)
        r, stage = _current(search)
        if parent not in search.state["beam"]:
            raise UserError(f"--parent {parent}: not in the beam ({', '.join(search.state['beam'])})")
        if branch > search.config.branching:
            raise UserError(f"--branch {branch}: the branching factor is {search.config.branching}")
        pid = f"r{r}-{parent}-b{branch}"
        if search.proposal(pid) is not None:
            raise UserError(f"{pid} is already recorded (status {search.proposal(pid)['status']})")
        if not search.files.gradient(r, parent).is_file():
            raise UserError(f"no gradient of {parent} for round {r}: run `architect shaper gradient` first")
        text = file.read_text(encoding="utf-8")
        rejections = json.loads(rejected_file.read_text())["rejections"] if rejected_file else []
        problems = sandbox_problems(text) if stage == "harness" else []
        if problems and len(rejections) < search.config.repair_attempts:
            emit({"ok": False, "proposal": pid, "rejections": rejections + [problems], "problems": problems,
                  "error": "the sandbox rejected this harness: fix it and call again with --rejected <this JSON>"},
                 as_json, human="rejected:\n" + "\n".join(problems))
            raise SystemExit(1)
        record = search.record_proposal(r, parent, branch, text, rejections + ([problems] if problems else []),
                                        rejected=bool(problems))
        search.save()
    emit({"ok": True, "proposal": record}, as_json, human=f"{pid}: {record['status']} -> {record['candidate']}")


@shaper_group.command("validate")
@click.argument("run")
@RUNS_DIR_OPTION
@JSON_OPTION
@handled
def validate_cmd(run, runs_dir, as_json):
    """Drop this round's exact duplicates, then stage, check, smoke, evaluate on the validation split
    and commit every other proposal (one iteration each; sandbox-rejected ones are discarded)."""
    with _open(run, runs_dir) as opened:
        search = _search(opened, progress_say())
        r, _ = _current(search)
        with _planner_endpoint(search):
            search.validate_round(r)
        rows = [{k: p[k] for k in ("id", "status", "candidate", "iteration", "reason")}
                for p in search.round_proposals(r)]
    emit({"ok": True, "round": r, "proposals": rows}, as_json)


@shaper_group.command("advance")
@click.argument("run")
@RUNS_DIR_OPTION
@JSON_OPTION
@handled
def advance_cmd(run, runs_dir, as_json):
    """Close the round: rank incumbents and new candidates by the run's selection rule (`study`: mean
    validation reward; `paired`: paired statistics with a per-category regression guard), keep the
    beam, report regressions against the seed; at a stage's end select and freeze its artefact."""
    with _open(run, runs_dir) as opened:
        search = _search(opened, progress_say())
        r, _ = _current(search)
        if next_step(search) != "advance":
            raise UserError(f"round {r} is not finished: next step is `{next_step(search)}`")
        search.close_round(r)
        entry = search.state["rounds"][-1]
        payload = {"ok": True, "round": r, "beam": search.state["beam"], "entry": entry, "next": next_step(search)}
    emit(payload, as_json)


@shaper_group.command("final")
@click.argument("run")
@RUNS_DIR_OPTION
@JSON_OPTION
@handled
def final_cmd(run, runs_dir, as_json):
    """Score the seed, the test-time scaling baselines and the selected pair's ablations (skill only,
    harness only, both) on every sealed test split; writes memory/shaper/final.json and final.md."""
    from harness.variants.shaper.search import commit_memory, final_markdown

    with _open(run, runs_dir) as opened:
        search = _search(opened, progress_say())
        if search.state["phase"] != "final":
            raise UserError(f"phase is {search.state['phase']}: the final evaluation follows the last round")
        if search.config.final_test:
            with _planner_endpoint(search):
                search.final_evaluation()
        search.state["phase"] = "done"
        search.save()
        commit_memory(opened, "shaper: final evaluation")
        record = search.files.read("shaper_final", search.files.final) or {"splits": None}
    emit({"ok": True, **record}, as_json,
         human=final_markdown(record) if record["splits"] else "no final test (final_test: false)")


@shaper_group.command("costs")
@click.argument("run")
@RUNS_DIR_OPTION
@JSON_OPTION
@handled
def costs_cmd(run, runs_dir, as_json):
    """Money spent per round and in total (rollouts, judge, summariser, optimizer, validation, final)."""
    from harness.rundir.layout import resolve_run
    from harness.variants.shaper.store import ShaperFiles

    paths = resolve_run(run, runs_dir)
    costs = ShaperFiles(paths.memory).read_beam()["costs"]
    emit({"ok": True, **costs}, as_json,
         human="\n".join(f"round {k}: ${v:.4f}" for k, v in costs["by_round"].items()) +
               f"\ntotal: ${costs['total_usd']:.4f}")
