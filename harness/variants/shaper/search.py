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
FINAL_ROWS = (("seed", "seed", "seed"), ("skill only", "evolved", "seed"),
              ("harness only", "seed", "evolved"), ("both", "evolved", "evolved"))


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

    def train_rollouts(self, cid: str, r: int) -> list[dict]:
        path = self.files.rollouts(cid)
        stored = self.files.read("shaper_rollout", path)
        if stored is not None:
            return stored["episodes"]
        from harness.evaluation import evaluate

        tier = self.splits["train"]
        with tempfile.TemporaryDirectory(prefix="shaper-train-") as tmp:
            metrics = evaluate(self.candidate_dir(cid), tier, episodes=self.config.train_episodes, workers=1,
                               out_dir=Path(tmp), progress=False)
            kind, why = classify_evaluation(metrics)
            if kind == "infrastructure":
                raise InfrastructureFailure(f"train rollout of {cid}: {why}")
            episodes = rollouts_from_evaluation(Path(tmp))
        cost = float(sum(e.get("cost_usd") or 0.0 for e in metrics["episodes"]))
        self.meter.add(r, cost)
        self.files.write("shaper_rollout", path, {"candidate": cid, "split": "train", "tier": tier,
                                                  "episodes": episodes, "cost_usd": round(cost, 6)})
        return episodes

    def gradient(self, cid: str, r: int, stage: str) -> dict:
        path = self.files.gradient(r, cid)
        stored = self.files.read("shaper_gradient", path)
        if stored is not None:
            return stored
        rollouts = self.train_rollouts(cid, r)
        chosen = sample_minibatch([e["episode_id"] for e in rollouts], self.config.minibatch,
                                  self.config.seed, f"{stage}:{r}:{cid}")
        before = self.meter.of_round(r)
        diagnosis = diagnose([e for e in rollouts if e["episode_id"] in chosen], self.roles, r, self.config)
        record = {"round": r, "stage": stage, "candidate": cid, "minibatch": chosen,
                  "cost_usd": round(max(0.0, self.meter.of_round(r) - before), 6), **diagnosis}
        self.files.write("shaper_gradient", path, record)
        return record

    def history(self, r: int) -> list[dict]:
        """The most recent resolved proposals of earlier rounds and how they fared."""
        out = []
        # in schedule order, whatever order concurrent proposals were recorded in
        for p in sorted(self.state["proposals"], key=lambda p: (p["round"], p["id"])):
            if p["round"] >= r or p["status"] == "proposed":
                continue
            if p["status"] == "committed":
                mine = self.state["candidates"][p["candidate"]]["mean_reward"]
                theirs = self.state["candidates"][p["parent"]]["mean_reward"]
                outcome = f"validation mean reward {mine:.3f} (parent {theirs:.3f})"
            else:
                outcome = {"duplicate": "an exact duplicate of an earlier candidate, not evaluated",
                           "rejected": "rejected by the sandbox even after the repair",
                           "incomparable": "its validation rollout was invalid in the simulator",
                           "discarded": f"discarded: {p.get('reason')}"}[p["status"]]
            out.append({"proposal": p["id"], "artefact": p["stage"], "parent": p["parent"], "outcome": outcome})
        return out[-self.config.history:]

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
                f"`{FILES[p['stage']]}` from the textual gradient in `{gradient}` and the recent history of "
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
        ranked = beams.rank(pool, rewards, config.alpha)
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
        if stage_ends:
            reports = {row["candidate"]: row["regression"] for row in rows}
            start = self.state["stage_start"]
            reports.setdefault(start, beams.regression_report(self.rewards(start), self.rewards(seed),
                                                              config.regression_margin))
            order = kept + ([{"candidate": start}] if start not in self.state["beam"] else [])
            try:
                chosen, passed_over = beams.select(order, reports)
            except ValueError:
                chosen, passed_over = start, [row["candidate"] for row in order]
            entry.update(selected=chosen, passed_over=passed_over)
            self.state["selected"][stage] = chosen
            self.state["beam"] = [chosen]
            self.state["stage_start"] = chosen
            self.say(f"{stage} stage selects {chosen}" + (f" (refused for regressions: {', '.join(passed_over)})"
                                                         if passed_over else ""))
        self.state["rounds"].append(entry)
        self.state["round"] = r + 1
        if r >= config.rounds:
            self.state["phase"] = "final"
        self.save()
        self.say(f"round {r} done: beam {', '.join(self.state['beam'])}; "
                 f"round cost ${self.meter.of_round(r):.4f}, total ${self.meter.total:.4f}")

    def seed_id(self) -> str:
        return next(c["id"] for c in self.state["candidates"].values() if c["stage"] == "seed")

    def selected_pair(self) -> str:
        return self.state["selected"]["harness"] or self.state["selected"]["skill"] or self.seed_id()

    # ------------------------------------------------------------------ final evaluation

    def final_evaluation(self) -> None:
        from harness.evaluation import evaluate

        seed, chosen = self.seed_id(), self.selected_pair()
        base, best = self.texts(seed), self.texts(chosen)
        tier = self.splits["test"]
        results: dict[tuple, dict] = {}
        rows = []
        with tempfile.TemporaryDirectory(prefix="shaper-final-") as tmp:
            for name, skill, harness in FINAL_ROWS:
                pair = (best["skill"] if skill == "evolved" else base["skill"],
                        best["harness"] if harness == "evolved" else base["harness"])
                if pair not in results:
                    folder = Path(tmp) / f"c{len(results)}"
                    shutil.copytree(self.candidate_dir(seed), folder)
                    (folder / FILES["skill"]).write_text(pair[0], encoding="utf-8")
                    (folder / FILES["harness"]).write_text(pair[1], encoding="utf-8")
                    self.say(f"final: {name} on the sealed test split ({tier})")
                    metrics = evaluate(folder, tier, episodes=self.config.test_episodes, workers=1, progress=False)
                    kind, why = classify_evaluation(metrics)
                    if kind == "infrastructure":
                        raise InfrastructureFailure(f"final evaluation ({name}): {why}")
                    self.meter.add(FINAL, sum(e.get("cost_usd") or 0.0 for e in metrics["episodes"]))
                    results[pair] = episode_scores(metrics)
                rows.append((name, skill, harness, results[pair]))
        seed_rewards = {e: s["reward"] for e, s in rows[0][3].items()}
        table = []
        for name, skill, harness, scores in rows:
            rewards = {e: s["reward"] for e, s in scores.items()}
            table.append({"configuration": name, "skill": skill, "harness": harness,
                          "mean_reward": round(beams.mean_reward(rewards), 6),
                          "success_rate": round(sum(s["success"] for s in scores.values()) / len(scores), 6),
                          "vs_seed": beams.paired_verdict(rewards, seed_rewards, self.config.alpha)})
        record = {"tier": tier, "episodes": len(seed_rewards), "selected": chosen, "rows": table,
                  "cost_usd": self.meter.of_round(FINAL)}
        self.files.write("shaper_final", self.files.final, record)
        write_text_atomic(self.files.final_table, final_markdown(record))
        self.say(final_markdown(record))


def frozen_changes(parent: Path, child: Path, stage: str) -> list[str]:
    """Files that differ from the parent other than the stage's own artefact (must be none)."""
    from harness.rundir.whitelist import candidate_files

    before, after = candidate_files(parent), candidate_files(child)
    return sorted(path for path in set(before) | set(after)
                  if before.get(path) != after.get(path) and path != FILES[stage])


def final_markdown(record: dict) -> str:
    lines = [f"# SHAPER final evaluation: {record['selected']} on {record['tier']} ({record['episodes']} episodes)", "",
             "| configuration | skill | harness | mean reward | success rate | vs seed (paired) |",
             "|---|---|---|---|---|---|"]
    for row in record["rows"]:
        vs = row["vs_seed"]
        lines.append(f"| {row['configuration']} | {row['skill']} | {row['harness']} | {row['mean_reward']:.3f} | "
                     f"{row['success_rate']:.1%} | {vs['verdict']} (+{vs['wins']}/-{vs['losses']}, "
                     f"Δ {vs['mean_difference']:+.3f}) |")
    return "\n".join(lines) + "\n"


def commit_memory(run: Run, subject: str) -> None:
    """Commit the run's SHAPER memory and records so the run is clean when the loop ends."""
    if gitops.git(run.root, "status", "--porcelain").strip():
        gitops.commit(run.root, subject, ("Architect-Memory", len(run.rows())), ["."])

