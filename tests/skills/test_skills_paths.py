"""Every path a skill names exists in the repository, or is a run / staging file
that the CLI creates and docs (contracts.md, docs/skills.md) document. A run's
files are named under RUN_DIR (the `run` field of `architect status`), never
under `runs/`: the runs folder moves with $ARCHITECT_RUNS_DIR."""

import re

import pytest

from skillpack import ARCHITECT, ROOT, VARIANTS, code_spans, named_paths, skill_files, split

DOCS = (ROOT / "docs" / "contracts.md").read_text(encoding="utf-8") + (ROOT / "docs" / "skills.md").read_text(encoding="utf-8")

# Staging-relative files the skills read or write (besides candidate/ and proposal.md).
STAGING_FILES = re.compile(r"^(STAGING|\$staging|S_k)/(.+)$")


def _expand(path: str) -> list[str]:
    return [path.replace("$variant", v) for v in VARIANTS] if "$variant" in path else [path]


ALL = [(p, path) for p in skill_files() for path in named_paths(split(p)[1])]


@pytest.mark.parametrize("skill,path", ALL, ids=[f"{s.stem}:{p}" for s, p in ALL])
def test_named_path_exists_or_is_documented(skill, path):
    assert not path.startswith("runs/"), \
        f"{skill.name}: {path} assumes the runs folder; name the run's folder RUN_DIR (`architect status RUN --json`)"
    if path.startswith("RUN_DIR/"):
        rest = path[len("RUN_DIR/"):]
        segments = [seg for seg in rest.split("/") if seg]
        if segments:  # the run folder itself needs nothing more
            last = re.sub(r"^(N|P|k|0)(?=\.|$)", "N", segments[-1])
            assert segments[0] in DOCS and last in DOCS, \
                f"{skill.name}: run path {path} is not documented in docs/contracts.md or docs/skills.md"
        return
    for expanded in _expand(path):
        assert (ROOT / expanded).exists(), f"{skill.name}: {expanded} does not exist"


def test_staging_files_are_documented():
    names = set()
    for skill in skill_files():
        for span in code_spans(split(skill)[1]):
            for token in span.split():
                m = STAGING_FILES.match(token.strip("`'\","))
                if m:
                    names.add(m.group(2))
    assert {"proposal.md", "history.md", "edit.json"} <= names
    for name in names:
        assert re.sub(r"-k(\.md|-try)", r"-1\1", name).split("/")[0] in DOCS or name.split("/")[0] in DOCS, name


def test_every_variant_named_by_the_proposer_exists():
    assert "variants/$variant.md" in split(ARCHITECT / "proposer.md")[1]
    for v in VARIANTS:
        assert (ARCHITECT / "variants" / f"{v}.md").is_file()
