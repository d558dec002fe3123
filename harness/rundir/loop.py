"""The offline search loop: stage -> propose -> check -> smoke -> evaluate ->
commit or discard, until a cap, the iteration target or a STOP file ends it."""

from __future__ import annotations

from rich.console import Console

from harness.errors import UserError
from harness.rundir import gitops, ledger, state, stopping
from harness.rundir.check import run_check
from harness.rundir.commit import commit, discard
from harness.rundir.display import score_text
from harness.rundir.layout import RunPaths
from harness.rundir.lock import run_lock
from harness.rundir.recover import finish_cut_short, recover_or_refuse
from harness.rundir.run import Run
from harness.rundir.stage import clear_stale, stage


LOOP_TRAILER = "Architect-Attempts"
STOPPED = ("stop_file", "max_iterations", "iterations_done", "max_consecutive_skips", "max_cost_usd", "max_tokens")


class Progress:
    """Live progress on stderr: one line per attempt, a spinner while evaluating."""

    def __init__(self, enabled: bool = True):
        self.enabled = enabled
        self.console = Console(stderr=True, quiet=not enabled)

    def say(self, text: str) -> None:
        self.console.print(text, highlight=False, soft_wrap=True)

    def status(self, text: str):
        return self.console.status(text)


def _stop_reason(run: Run, target: int) -> str | None:
    condition = stopping.due(run.paths, run.manifest, run.rows(), target)
    if condition is None:
        return None
    if condition["code"] == "stop_file":
        run.paths.stop_file.unlink()  # honoured once; the next --resume continues
    return condition["code"]


def attempt_once(run: Run, seed: int | None, show: Progress, propose) -> dict:
    """One attempt; returns its ledger row (committed or discarded)."""
    attempt = len(run.rows())
    staging = stage(run)
    meta = run.staging_meta(staging)
    label = f"iter {meta['iteration']} (attempt {attempt}) <- parent {meta['parent']}"
    try:
        proposal = propose(staging, seed, attempt, run.graph_hashes())
    except UserError as exc:
        return discard(run, staging, f"proposer: {exc.message}")
    with show.status(f"{label}: check"):
        checked = run_check(run, staging)
    if checked["violations"]:
        first = checked["violations"][0]["message"]
        return discard(run, staging, f"check: {len(checked['violations'])} violation(s); first: {first}")
    with show.status(f"{label}: smoke — {proposal.description}"):
        smoke = run.evaluate_staging(staging, "smoke")
    if not smoke["passed"]:
        return discard(run, staging, "smoke gate: " + "; ".join(smoke["reasons"][:3]))
    show.say(f"{label}: evaluate — {proposal.description}")
    evaluation = run.evaluate_staging(staging, "eval", progress=show.enabled)  # bar: episodes, success, ETA
    if not evaluation["passed"]:
        return discard(run, staging, "evaluation: " + "; ".join(evaluation["reasons"][:3]))
    return commit(run, staging, proposal.description)


def run_loop(paths: RunPaths, *, target: int | None, seed: int | None, show: Progress, propose,
             certification: dict | None = None) -> dict:
    """Drive the loop under the run lock with the variant's offline proposer
    (`propose(staging, seed, attempt, seen)`); always records why it ended.
    When it stops (not on an error or interrupt) and `certification` is given
    ({"reruns", "holdout_episodes"}), certify the run (harness.rundir.certify)."""
    with run_lock(paths.lock):
        for action in recover_or_refuse(paths):
            show.say(f"[yellow]recovered:[/] {action}")
        run = Run(paths)
        for name in clear_stale(run):
            show.say(f"[yellow]removed stale staging[/] {name}")
        seed = run.manifest.get("seed") if seed is None else seed
        target = run.manifest["caps"]["max_iterations"] if target is None else target
        state.refresh(paths, status="running", stop_reason=None)
        reason = "error"
        try:
            while (reason := _stop_reason(run, target)) is None:
                row = attempt_once(run, seed, show, propose)
                best = ledger.best_row(run.rows())
                best_text = f"best {score_text(best.get('primary'))} @ iter {best['iteration']}" if best else ""
                if row["status"] == "committed":
                    show.say(f"[green]iter {row['iteration']}[/] <- {row['parent']} | "
                             f"score {score_text(row.get('primary'))} | {best_text} | {row['description']}")
                else:
                    show.say(f"[red]discarded[/] iter {row['iteration']} <- {row['parent']} | {best_text} | "
                             f"{row['description']}: {row['reason']}")
        except KeyboardInterrupt:
            reason = "interrupted"
            raise
        except UserError as exc:
            reason = f"error: {exc.message}"
            raise
        except Exception as exc:
            reason = f"error: {type(exc).__name__}: {exc}"
            raise
        finally:
            finish_cut_short(paths)
            final = state.refresh(paths, status="stopped", stop_reason=reason)
            # the run is clean when the loop ends: final state, ledger and memory committed
            gitops.commit_pending(paths.root, f"loop stopped: {reason}", (LOOP_TRAILER, final["attempts"]))
        certified = None
        if certification is not None and reason in STOPPED:
            from harness.rundir.certify import certify

            holdout = certification.get("holdout_episodes") or run.manifest["caps"].get("eval_episodes")
            with show.status("certification: reruns of iteration 0 and the best, then the holdout"):
                certified = certify(run, reruns=certification.get("reruns", 3), holdout_episodes=holdout,
                                    progress=show.enabled)
    from harness.rundir.evidence import best_view

    return {"run": str(paths.root), "run_id": paths.run_id, "stop_reason": reason, "state": final,
            "rows": run.rows(), "best": best_view(paths), "certification": certified}
