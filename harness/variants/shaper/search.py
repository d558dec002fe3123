"""The SHAPER search over a run directory: rounds of rollout -> textual gradient ->
proposals -> validation, a beam per stage, then the final test evaluation.

Every proposal that reaches validation is one run-directory iteration (stage,
check, smoke, evaluate on the validation split, commit); one the sandbox
rejects even after its repair, or whose check, smoke or simulator fails, is a
discarded attempt. Exact-text duplicates are dropped before staging. All state
lives in `memory/shaper/` and is saved after every step, so a stopped or
aborted run resumes where it was: gradients and proposals already made are
reused, committed proposals are not evaluated again.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from harness.fileio import read_json, write_text_atomic
from harness.rundir import gitops, proposal as proposal_file
from harness.rundir.check import run_check
from harness.rundir.commit import commit, discard
from harness.rundir.run import Run
from harness.rundir.stage import stage as stage_folder
from harness.variants.shaper import beam as beams
from harness.variants.shaper.config import ShaperConfig
from harness.variants.shaper.gradient import diagnose, sample_minibatch
from harness.variants.shaper.models import FINAL, CostMeter, InfrastructureFailure, Roles
from harness.variants.shaper.optimizer import FILES, propose
from harness.variants.shaper.rollout import classify_evaluation, episode_scores, rollouts_from_evaluation
from harness.variants.shaper.store import ShaperFiles

AXES = {"skill": ["prompt"], "harness": ["memory/state"]}


class Search:
    def __init__(self, run: Run, roles: Roles, meter: CostMeter, say=lambda text: None):
        self.run = run
        self.files = ShaperFiles(run.paths.memory)
        self.state = self.files.read_beam()
        self.config = ShaperConfig(**self.state["config"])
        self.roles = roles
        self.meter = meter
        self.say = say
        self.lock = threading.Lock()
        self.timings: dict[str, dict] = {}  # round -> {"wall", "generate": {parent: s}, "validate": {...}, "commit": {...}}
        from harness.executor_api import load_executor

        self.executor = load_executor(run.manifest["executor"])
        self.splits = self.executor.profile["splits"]

    # ------------------------------------------------------------------ state

    def save(self) -> None:
        with self.lock:
            self.state["costs"] = {"by_round": dict(self.meter.by_round), "total_usd": self.meter.total}
            self.files.write_beam(self.state)

    def texts(self, cid: str) -> dict:
        cand = self.state["candidates"][cid]
        return {"skill": self.state["texts"][cand["skill"]], "harness": self.state["texts"][cand["harness"]]}

    def candidate_dir(self, cid: str) -> Path:
        return self.run.paths.iteration(self.state["candidates"][cid]["iteration"]) / "candidate"

    def rewards(self, cid: str) -> dict:
        return self.state["candidates"][cid]["rewards"]

    # ------------------------------------------------------------------ driving

    def run_all(self) -> str:
        """Rounds until the schedule is done, then the final evaluation. Returns why it ended."""
        while self.state["phase"] == "search":
            if self.run.paths.stop_file.exists():
                self.run.paths.stop_file.unlink()
                return "stop_file"
            self.run_round(self.state["round"])
        if self.state["phase"] == "final":
            if self.config.final_test:
                self.final_evaluation()
            self.state["phase"] = "done"
            self.save()
        return "schedule_done"

    def run_round(self, r: int) -> None:
        stage = self.config.stage_of(r)
        beam_before = list(self.state["beam"])
        self.say(f"round {r} ({stage} stage): beam {', '.join(beam_before)}")
        started = time.perf_counter()
        with ThreadPoolExecutor(max_workers=len(beam_before)) as pool:
            list(pool.map(lambda parent: self.timed(r, "generate", parent, self.generate, parent, r, stage),
                          beam_before))
        self.save()
        self.validate_round(r)
        self.close_round(r)
        self.timings.setdefault(str(r), {})["wall"] = time.perf_counter() - started

    def timed(self, r: int, phase: str, key: str, function, *args):
        """Call function(*args) and keep its duration (benchmarks read `timings`)."""
        started = time.perf_counter()
        try:
            return function(*args)
        finally:
            self.timings.setdefault(str(r), {}).setdefault(phase, {})[key] = time.perf_counter() - started

    def round_proposals(self, r: int) -> list[dict]:
        """The round's proposals in schedule order (beam position, then branch)."""
        order = {f"r{r}-{parent}-b{branch}": (i, branch) for i, parent in enumerate(self.state["beam"])
                 for branch in range(1, self.config.branching + 1)}
        return sorted((p for p in self.state["proposals"] if p["id"] in order), key=lambda p: order[p["id"]])

    def validate_round(self, r: int) -> None:
        """Drop duplicates (in schedule order), then validate and commit or discard the rest."""
        pending = [p for p in self.round_proposals(r) if self.admit(p)]
        self.save()
        self.validate_all(pending)

    def close_round(self, r: int) -> None:
        ordered = self.round_proposals(r)
        new = [p["candidate"] for p in ordered if p["status"] == "committed"]
        self.update_beam(r, self.config.stage_of(r), list(self.state["beam"]), [p["id"] for p in ordered], new)

    # ------------------------------------------------------------------ rollouts, gradients, proposals

    def roll_out(self, cid: str, r: int, only: list[str] | None = None) -> list[dict]:
        """Rollout records of the candidate on the train split (`only`: these episodes of it)."""
        from harness.evaluation import evaluate

        with tempfile.TemporaryDirectory(prefix="shaper-train-") as tmp:
            metrics = evaluate(self.candidate_dir(cid), self.splits["train"], episodes=self.config.train_episodes,
                               only=only, workers=1, out_dir=Path(tmp), progress=False)
            kind, why = classify_evaluation(metrics)
            if kind == "infrastructure":
                raise InfrastructureFailure(f"train rollout of {cid}: {why}")
            episodes = rollouts_from_evaluation(Path(tmp))
        self.meter.add(r, float(sum(e.get("cost_usd") or 0.0 for e in metrics["episodes"])))
        return episodes

    def rollout_file(self, cid: str, r: int) -> Path:
        """Where the train rollouts a gradient reads are kept: per round under "study" (a fresh
        minibatch), per candidate under "paired" (the whole train split, once)."""
        return self.files.rollouts(cid, r if self.config.selection == "study" else None)

    def train_ids(self) -> list[str]:
        from harness.tier_groups import capped_tier_episodes

        # the episodes evaluate(episodes=N) runs
        episodes = capped_tier_episodes(self.executor, self.splits["train"], self.config.train_episodes)
        return [str(e["episode_id"]) for e in episodes]

    def minibatch(self, cid: str, r: int, stage: str) -> tuple[list[str], list[dict]]:
        """The round's minibatch of the candidate and its rollouts: under "study" a fresh draw of
        train episodes rolled out now, under "paired" a draw from its cached train rollouts."""
        key = f"{stage}:{r}:{cid}"
        path = self.rollout_file(cid, r)
        stored = self.files.read("shaper_rollout", path)
        if self.config.selection == "study":
            chosen = sample_minibatch(self.train_ids(), self.config.minibatch, self.config.seed, key)
        if stored is None:
            before = self.meter.of_round(r)
            episodes = self.roll_out(cid, r, only=chosen if self.config.selection == "study" else None)
            stored = {"candidate": cid, "split": "train", "tier": self.splits["train"], "episodes": episodes,
                      "cost_usd": round(max(0.0, self.meter.of_round(r) - before), 6)}
            self.files.write("shaper_rollout", path, stored)
        if self.config.selection == "paired":
            chosen = sample_minibatch([e["episode_id"] for e in stored["episodes"]], self.config.minibatch,
                                      self.config.seed, key)
        return chosen, [e for e in stored["episodes"] if e["episode_id"] in chosen]

    def gradient(self, cid: str, r: int, stage: str) -> dict:
        path = self.files.gradient(r, cid)
        stored = self.files.read("shaper_gradient", path)
        if stored is not None:
            return stored
        chosen, rollouts = self.minibatch(cid, r, stage)
        before = self.meter.of_round(r)
        diagnosis = diagnose(rollouts, self.roles, r, self.config)
        record = {"round": r, "stage": stage, "candidate": cid, "minibatch": chosen,
                  "cost_usd": round(max(0.0, self.meter.of_round(r) - before), 6), **diagnosis}
        self.files.write("shaper_gradient", path, record)
        return record

    def history(self, r: int) -> list[str]:
        """What the optimizer is told of earlier rounds, oldest first: under "study" the run's event
        history (every resolved proposal and every round's beam), under "paired" the `history`
        most recent resolved proposals."""
        proposals = [p for p in self.state["proposals"] if p["round"] < r and p["status"] != "proposed"]
        # in schedule order, whatever order concurrent proposals were recorded in
        events = [(p["round"], 0, p["id"], self.proposal_event(p)) for p in proposals]
        if self.config.selection == "paired":
            return [text for *_, text in sorted(events)][-self.config.history:]
        for entry in self.state["rounds"]:
            kept = ", ".join(f"{row['candidate']} ({row['mean_reward']:.3f})" for row in entry["beam_after"])
            chosen = f"; the {entry['stage']} stage selected {entry['selected']}" if entry.get("selected") else ""
            events.append((entry["round"], 1, "", f"round {entry['round']} ({entry['stage']}): beam kept {kept}"
                                                  f"{chosen}"))
        return [text for *_, text in sorted(events)]

    def proposal_event(self, p: dict) -> str:
        if p["status"] == "committed":
            mine = self.state["candidates"][p["candidate"]]["mean_reward"]
            theirs = self.state["candidates"][p["parent"]]["mean_reward"]
            outcome = f"validation mean reward {mine:.3f} (parent {theirs:.3f})"
        else:
            outcome = {"duplicate": "an exact duplicate of an earlier candidate, not evaluated",
                       "rejected": f"rejected by the sandbox even after the repair ({p.get('reason')})",
                       "incomparable": "its validation rollout was invalid in the simulator",
                       "discarded": f"discarded: {p.get('reason')}"}[p["status"]]
        return f"{p['id']} ({p['stage']}) from {p['parent']}: {outcome}"

    def proposal(self, pid: str) -> dict | None:
        return next((p for p in self.state["proposals"] if p["id"] == pid), None)

    def generate(self, parent: str, r: int, stage: str) -> None:
        """The parent's gradient, then `branching` proposals (skipping those already made)."""
        todo = [b for b in range(1, self.config.branching + 1) if self.proposal(f"r{r}-{parent}-b{b}") is None]
        if not todo:
            return
        gradient = self.gradient(parent, r, stage)
        history = self.history(r)
        texts = self.texts(parent)

        def one(branch: int) -> None:
            made = propose(self.roles, r, stage=stage, texts=texts, gradient=gradient["text"], history=history,
                           branch=branch, config=self.config)
            self.record_proposal(r, parent, branch, made["text"], made["rejections"],
                                 rejected=made["status"] == "rejected")

        with ThreadPoolExecutor(max_workers=len(todo)) as pool:
            list(pool.map(one, todo))

    def record_proposal(self, r: int, parent: str, branch: int, text: str, rejections: list[list[str]],
                        rejected: bool) -> dict:
        """Keep a proposal (the parent's texts with the stage's artefact replaced by `text`)."""
        stage = self.config.stage_of(r)
        new = dict(self.texts(parent), **{stage: text})
        record = {"id": f"r{r}-{parent}-b{branch}", "round": r, "stage": stage, "parent": parent, "branch": branch,
                  "status": "rejected" if rejected else "proposed",
                  "candidate": beams.candidate_id(new["skill"], new["harness"]), "rejections": rejections,
                  "iteration": None, "admitted": False, "logged": False,
                  "reason": ("sandbox: " + "; ".join(rejections[-1])) if rejected else None,
                  "skill_sha": beams.text_sha(new["skill"]), "harness_sha": beams.text_sha(new["harness"])}
        with self.lock:
            for value in new.values():
                self.state["texts"][beams.text_sha(value)] = value
            self.state["proposals"].append(record)
        return record

    def admit(self, p: dict) -> bool:
        """In schedule order: drop exact-text duplicates; True when the proposal still needs validating."""
        seen = self.state["seen"]
        if p["status"] == "rejected" and p["candidate"] not in seen:
            seen.append(p["candidate"])
        if p["status"] != "proposed" or self.reconcile(p):
            return False
        if p["admitted"]:
            return True  # admitted before an interruption: its validation is still due
        if p["candidate"] in seen:
            p["status"], p["reason"] = "duplicate", "exact-text duplicate of an earlier candidate"
            return False
        seen.append(p["candidate"])
        p["admitted"] = True
        return True

    def reconcile(self, p: dict) -> bool:
        """A proposal committed before a crash that did not record it: record it now from the ledger."""
        for row in self.run.rows():
            if row["status"] == "committed" and (row.get("shaper") or {}).get("proposal") == p["id"]:
                metrics = read_json(self.run.paths.iteration(row["iteration"]) / "eval" / "metrics.json")
                self.record_candidate(p, row["iteration"], metrics)
                return True
        return False

    # ------------------------------------------------------------------ validation as run iterations

    def validate_all(self, pending: list[dict]) -> None:
        rejected = [p for p in self.state["proposals"] if p["status"] == "rejected" and not p["logged"]]
        staged = []
        for p in rejected + pending:
            folder = stage_folder(self.run, parent=self.state["candidates"][p["parent"]]["iteration"],
                                  slot=f"p{len(staged) + 1}")
            self.write_candidate(p, folder)
            staged.append((p, folder))
        results: dict[str, dict] = {}
        with ThreadPoolExecutor(max_workers=max(1, len(staged))) as pool:
            futures = {p["id"]: pool.submit(self.timed, p["round"], "validate", p["id"], self.validate, p, folder)
                       for p, folder in staged}
            for pid, future in futures.items():
                try:
                    results[pid] = future.result()
                except InfrastructureFailure as exc:
                    results[pid] = {"infrastructure": exc}
        failure = None
        for p, folder in staged:
            outcome = results[p["id"]]
            if "infrastructure" in outcome:
                failure = failure or outcome["infrastructure"]
                shutil.rmtree(folder, ignore_errors=True)
                continue
            self.timed(p["round"], "commit", p["id"], self.finish, p, folder, outcome)
            self.save()
        if failure is not None:
            raise failure

    def write_candidate(self, p: dict, folder: Path) -> None:
        candidate = folder / "candidate"
        write_text_atomic(candidate / FILES["skill"], self.state["texts"][p["skill_sha"]])
        write_text_atomic(candidate / FILES["harness"], self.state["texts"][p["harness_sha"]])
        gradient = self.files.gradient(p["round"], p["parent"]).relative_to(self.run.root)
        repaired = f"The sandbox rejected {len(p['rejections'])} attempt(s); the error was fed back.\n" \
            if p["rejections"] else ""
        body = (f"\n## Rationale\n\nSHAPER {p['stage']} stage, round {p['round']}, proposal {p['branch']} of "
                f"{self.config.branching} from candidate {p['parent']}: the optimizer rewrote "
                f"`{FILES[p['stage']]}` from the textual gradient in `{gradient}` and the history of earlier "
                f"proposals. The other artefact is frozen in this stage.\n{repaired}")
        parent_iteration = self.state["candidates"][p["parent"]]["iteration"]
        proposal_file.write(folder / "proposal.md", {
            "description": f"shaper {p['stage']} r{p['round']}: {FILES[p['stage']]} from {p['parent']} "
                           f"(branch {p['branch']}) -> {p['candidate']}",
            "axes": AXES[p["stage"]], "parent": parent_iteration}, body)

    def validate(self, p: dict, folder: Path) -> dict:
        """check, smoke, validation split: {"ok", "metrics"} or {"discard": reason, "status": ...}."""
        if p["status"] == "rejected":
            return {"discard": p["reason"], "status": "rejected"}
        changed = frozen_changes(self.candidate_dir(p["parent"]), folder / "candidate", p["stage"])
        if changed:
            return {"discard": f"frozen artefact changed in the {p['stage']} stage: {', '.join(changed)}",
                    "status": "discarded"}
        checked = run_check(self.run, folder)
        if checked["violations"]:
            return {"discard": f"check: {checked['violations'][0]['message']}", "status": "discarded"}
        smoke = self.run.evaluate_staging(folder, "smoke")
        self.meter.add(p["round"], smoke.get("cost_usd"))
        smoke_metrics = folder / "smoke" / "metrics.json"
        if smoke_metrics.is_file():
            kind, why = classify_evaluation(read_json(smoke_metrics))
            if kind == "infrastructure":
                raise InfrastructureFailure(f"smoke tier of {p['id']}: {why}")
        if not smoke["passed"]:
            return {"discard": "smoke gate: " + "; ".join(smoke["reasons"][:3]), "status": "discarded"}
        verdict = self.run.evaluate_staging(folder, "eval")
        self.meter.add(p["round"], verdict.get("cost_usd"))
        metrics_path = folder / "eval" / "metrics.json"
        if not metrics_path.is_file():
            raise InfrastructureFailure(f"validation of {p['id']}: " + "; ".join(verdict["reasons"]))
        metrics = read_json(metrics_path)
        kind, why = classify_evaluation(metrics)
        if kind == "infrastructure":
            raise InfrastructureFailure(f"validation of {p['id']}: {why}")
        if kind == "incomparable":
            return {"discard": f"incomparable: {why}", "status": "incomparable"}
        if not verdict["passed"]:
            return {"discard": "evaluation: " + "; ".join(verdict["reasons"][:3]), "status": "discarded"}
        return {"ok": True, "metrics": metrics}

    def finish(self, p: dict, folder: Path, outcome: dict) -> None:
        if "discard" in outcome:
            discard(self.run, folder, outcome["discard"])
            p["status"], p["reason"] = outcome["status"], outcome["discard"]
            p["logged"] = True
            self.say(f"  {p['id']}: {outcome['status']} ({outcome['discard'][:120]})")
            return
        r = p["round"]
        extra = {"shaper": {"stage": p["stage"], "round": r, "proposal": p["id"], "candidate": p["candidate"],
                            "round_cost_usd": self.meter.of_round(r), "total_cost_usd": self.meter.total}}
        row = commit(self.run, folder, None, extra=extra)
        self.record_candidate(p, row["iteration"], outcome["metrics"])
        cand = self.state["candidates"][p["candidate"]]
        self.say(f"  {p['id']}: iteration {row['iteration']}, validation mean reward {cand['mean_reward']:.3f}"
                 f"{' (repaired after a sandbox rejection)' if p['rejections'] else ''}")

    def record_candidate(self, p: dict, iteration: int, metrics: dict) -> None:
        scores = episode_scores(metrics)
        rewards = {e: s["reward"] for e, s in scores.items()}
        self.state["candidates"][p["candidate"]] = {
            "id": p["candidate"], "skill": p["skill_sha"], "harness": p["harness_sha"], "iteration": iteration,
            "parent": p["parent"], "stage": p["stage"], "round": p["round"], "status": "evaluated", "reason": None,
            "rewards": rewards, "successes": {e: s["success"] for e, s in scores.items()},
            "mean_reward": round(beams.mean_reward(rewards), 6)}
        p["status"], p["iteration"] = "committed", iteration

    # ------------------------------------------------------------------ beam

    def update_beam(self, r: int, stage: str, beam_before: list[str], proposal_ids: list[str], new: list[str]) -> None:
        config, seed = self.config, self.seed_id()
        pool = list(dict.fromkeys(beam_before + new))
        rewards = {cid: self.rewards(cid) for cid in pool}
        ranked = beams.rank_by_mean(pool, rewards) if config.selection == "study" else \
            beams.rank(pool, rewards, config.alpha)
        kept = ranked[:config.beam_width]
        rows = []
        for row in kept:
            cid = row["candidate"]
            rows.append({"candidate": cid, "incumbent": cid in beam_before, "paired_net": row["paired_net"],
                         "mean_reward": row["mean_reward"],
                         "vs_seed": beams.paired_verdict(rewards[cid], self.rewards(seed), config.alpha),
                         "regression": beams.regression_report(rewards[cid], self.rewards(seed),
                                                               config.regression_margin)})
        entry = {"round": r, "stage": stage, "beam_before": beam_before, "proposals": proposal_ids,
                 "beam_after": rows, "cost_usd": self.meter.of_round(r)}
        self.state["beam"] = [row["candidate"] for row in kept]
        stage_ends = r == config.rounds or config.stage_of(r + 1) != stage
        if stage_ends and config.selection == "study":
            chosen, passed_over = self.best_seen(stage), []
            self.say(f"{stage} stage selects {chosen}, the best validation mean reward seen in the stage")
        elif stage_ends:
            reports = {row["candidate"]: row["regression"] for row in rows}
            start = self.state["stage_start"]
            reports.setdefault(start, beams.regression_report(self.rewards(start), self.rewards(seed),
                                                              config.regression_margin))
            order = kept + ([{"candidate": start}] if start not in self.state["beam"] else [])
            try:
                chosen, passed_over = beams.select(order, reports)
            except ValueError:
                chosen, passed_over = start, [row["candidate"] for row in order]
            self.say(f"{stage} stage selects {chosen}" + (f" (refused for regressions: {', '.join(passed_over)})"
                                                         if passed_over else ""))
        if stage_ends:
            entry.update(selected=chosen, passed_over=passed_over)
            self.state["selected"][stage] = chosen
            self.state["beam"] = [chosen]
            self.state["stage_start"] = chosen
        self.state["rounds"].append(entry)
        self.state["round"] = r + 1
        if r >= config.rounds:
            self.state["phase"] = "final"
        self.save()
        self.say(f"round {r} done: beam {', '.join(self.state['beam'])}; "
                 f"round cost ${self.meter.of_round(r):.4f}, total ${self.meter.total:.4f}")

    def best_seen(self, stage: str) -> str:
        """The stage's start or any candidate evaluated in the stage with the highest validation mean
        reward (ties: the earlier iteration)."""
        start = self.state["stage_start"]
        seen = [c for c in self.state["candidates"].values() if c["stage"] == stage or c["id"] == start]
        return min(seen, key=lambda c: (-c["mean_reward"], c["iteration"]))["id"]

    def seed_id(self) -> str:
        return next(c["id"] for c in self.state["candidates"].values() if c["stage"] == "seed")

    def selected_pair(self) -> str:
        return self.state["selected"]["harness"] or self.state["selected"]["skill"] or self.seed_id()

    # ------------------------------------------------------------------ final evaluation

    def final_evaluation(self) -> None:
        """Every final configuration on every sealed test split (the episodes of each split an evenly
        spaced `test_episodes` of its tier), each compared with the seed by the paired test."""
        from harness.evaluation import evaluate

        seed, chosen = self.seed_id(), self.selected_pair()
        base, best = self.texts(seed), self.texts(chosen)
        configurations = final_configurations(base, best)
        splits = []
        with tempfile.TemporaryDirectory(prefix="shaper-final-") as tmp:
            folders = {}
            for key in configurations.values():
                if key not in folders:
                    folders[key] = Path(tmp) / f"c{len(folders)}"
                    self.write_final_candidate(folders[key], *key)
            for split, tier in sealed_splits(self.splits).items():
                only = spaced_subset(self.executor.episodes(tier), self.test_size())
                results: dict[tuple, dict] = {}
                for name, key in configurations.items():
                    if key not in results:
                        self.say(f"final: {name} on test split {split} ({tier}, {len(only)} episodes)")
                        metrics = evaluate(folders[key], tier, only=only, workers=1, progress=False)
                        kind, why = classify_evaluation(metrics)
                        if kind == "infrastructure":
                            raise InfrastructureFailure(f"final evaluation ({name}, {split}): {why}")
                        self.meter.add(FINAL, sum(e.get("cost_usd") or 0.0 for e in metrics["episodes"]))
                        results[key] = episode_scores(metrics)
                seed_scores = results[configurations["seed"]]
                rows = [final_row(name, results[key], seed_scores, self.config.alpha)
                        for name, key in configurations.items()]
                splits.append({"split": split, "tier": tier, "episodes": len(only), "rows": rows})
        record = {"selected": chosen, "seed": seed, "splits": splits, "unavailable": dict(self.splits.get("unavailable") or {}),
                  "cost_usd": self.meter.of_round(FINAL)}
        self.files.write("shaper_final", self.files.final, record)
        write_text_atomic(self.files.final_table, final_markdown(record))
        self.say(final_markdown(record))

    def test_size(self) -> int | None:
        return self.config.test_episodes or self.splits.get("test_episodes")

    def write_final_candidate(self, folder: Path, skill: str, harness: str, baseline: str | None):
        """The seed's candidate with these texts and, for a test-time scaling baseline, its planner
        sampling replies and picking one by `baseline`."""
        shutil.copytree(self.candidate_dir(self.seed_id()), folder)
        for kind, text in (("skill", skill), ("harness", harness)):
            (folder / FILES[kind]).write_text(text, encoding="utf-8")
        if baseline is not None:
            graph_path = folder / "graph.json"
            graph = json.loads(graph_path.read_text(encoding="utf-8"))
            write_text_atomic(graph_path, json.dumps(tts_graph(graph, baseline), indent=2) + "\n")


BASELINES = {"MG-Select-like": "verifier", "VOTE-like": "vote"}
TTS_SAMPLES = 4


def final_configurations(seed: dict, best: dict) -> dict:
    """name -> (skill text, harness text, test-time scaling pick or None); equal keys run once."""
    return {"seed": (seed["skill"], seed["harness"], None),
            **{name: (seed["skill"], seed["harness"], pick) for name, pick in BASELINES.items()},
            "skill only": (best["skill"], seed["harness"], None), "harness only": (seed["skill"], best["harness"], None),
            "both": (best["skill"], best["harness"], None)}


def tts_graph(graph: dict, pick: str) -> dict:
    """The seed graph with every llm.Chat planner as llm.SampledChat (TTS_SAMPLES replies, picked by
    `pick`), its model-call and token budgets scaled by the extra calls."""
    out = json.loads(json.dumps(graph))
    for node in out["nodes"].values():
        if node["type"] == "llm.Chat":
            node["type"] = "llm.SampledChat"
            node["config"] = dict(node["config"], samples=TTS_SAMPLES, pick=pick)
    budgets = out.get("budgets") or {}
    for key in ("model_calls", "tokens"):
        if budgets.get(key):
            budgets[key] = int(budgets[key]) * (TTS_SAMPLES + 1)
    return out


def final_row(name: str, scores: dict, seed_scores: dict, alpha: float) -> dict:
    rewards = {e: s["reward"] for e, s in scores.items()}
    return {"configuration": name, "skill": "evolved" if name in ("skill only", "both") else "seed",
            "harness": "evolved" if name in ("harness only", "both") else "seed",
            "mean_reward": round(beams.mean_reward(rewards), 6),
            "success_rate": round(sum(s["success"] for s in scores.values()) / len(scores), 6),
            "vs_seed": beams.paired_verdict(rewards, {e: s["reward"] for e, s in seed_scores.items()}, alpha)}


def sealed_splits(splits: dict) -> dict[str, str]:
    """The profile's sealed test splits, name -> tier (one unnamed split is `test`)."""
    from harness.executor_api import split_tiers

    return {name.removeprefix("test/"): tier for name, tier in split_tiers(splits).items() if name.startswith("test")}


def spaced_subset(episodes: list[dict], size: int | None) -> list[str]:
    """The ids of `size` episodes spread evenly over the tier's order (all when size is None or more)."""
    ids = [str(e["episode_id"]) for e in episodes]
    if size is None or size >= len(ids):
        return ids
    return [ids[(i * len(ids)) // size] for i in range(size)]


def frozen_changes(parent: Path, child: Path, stage: str) -> list[str]:
    """Files that differ from the parent other than the stage's own artefact (must be none)."""
    from harness.rundir.whitelist import candidate_files

    before, after = candidate_files(parent), candidate_files(child)
    return sorted(path for path in set(before) | set(after)
                  if before.get(path) != after.get(path) and path != FILES[stage])


def final_markdown(record: dict) -> str:
    lines = [f"# SHAPER final evaluation of {record['selected']}"]
    if record["selected"] == record["seed"]:
        lines += ["", "The selected pair is the seed itself: no candidate scored higher on the validation split, "
                      "so its evolved rows run the seed's texts."]
    for split in record["splits"]:
        lines += ["", f"## {split['split']}: {split['tier']} ({split['episodes']} episodes)", "",
                  "| configuration | skill | harness | mean reward | success rate | vs seed (paired) |",
                  "|---|---|---|---|---|---|"]
        for row in split["rows"]:
            vs = row["vs_seed"]
            verdict = "-" if row["configuration"] == "seed" else \
                f"{vs['verdict']} (+{vs['wins']}/-{vs['losses']}, Δ {vs['mean_difference']:+.3f})"
            lines.append(f"| {row['configuration']} | {row['skill']} | {row['harness']} | {row['mean_reward']:.3f} | "
                         f"{row['success_rate']:.1%} | {verdict} |")
    for name, why in sorted(record.get("unavailable", {}).items()):
        lines += ["", f"## {name}: not available", "", why.strip()]
    return "\n".join(lines) + "\n"


def commit_memory(run: Run, subject: str) -> None:
    """Commit the run's SHAPER memory and records so the run is clean when the loop ends."""
    if gitops.git(run.root, "status", "--porcelain").strip():
        gitops.commit(run.root, subject, ("Architect-Memory", len(run.rows())), ["."])

