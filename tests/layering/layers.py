"""The layering checker: dependencies read from the source (AST), not from a running import.

A dependency is an import statement (inside functions too: a lazy import still
couples two modules) or a string literal that names a module of ours: a
module path (`"executors.babyai.world"`) or a `"module:attr"` reference, the
way specs, registries and sandboxes wire plug-ins by string. Layers:

- CLI: `harness.cli.*` and a plug-in's command module (`<package>.cli` under
  harness/variants/ or executors/). No other module depends on them, except
  the spec declaring its commands (`commands={...}`, read only by the root
  CLI); a plug-in's command module uses only `harness.cli.conventions`.
- An executor (`executors.<name>.*`) depends on no other executor. A package
  under executors/ whose `__init__.py` sets `SHARED = True` is not an executor
  but code several executors share (executors/mp3d): any executor may depend
  on it, and it depends on no executor.
- Production code (harness/, executors/) depends on nothing under tests/.
- The canvas (`harness.canvas.*`) depends on neither the models package nor
  any executor: they plug into it.
- The restricted-execution core (`harness.sandbox.*`) sits below canvas and
  models: it depends on nothing of ours but itself and `harness.pysource`.
- The loopback server base (`harness.models.loopback`), which executors' and
  variants' model stand-ins build on, depends on nothing of ours.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

PACKAGES = ("harness", "executors")
OURS = ("harness", "executors", "tests")
MODULE_PATH = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*(:[A-Za-z_][\w.]*)?$")
DECLARATION_KEYWORD = "commands"


@dataclass(frozen=True)
class Dependency:
    source: str  # the module that depends
    target: str  # the module it names
    kind: str  # "import", "string" or "declaration" (a string inside a spec's `commands=`)
    line: int

    def __str__(self) -> str:
        return f"{self.source}:{self.line} {self.kind} {self.target}"


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def library_modules(root: Path) -> dict[str, Path]:
    return {module_name(root, p): p for pkg in PACKAGES if (root / pkg).is_dir()
            for p in sorted((root / pkg).rglob("*.py"))}


def _string_target(text: str) -> str | None:
    """The module a string literal names, when it is a module path or "module:attr" of ours."""
    if not MODULE_PATH.match(text) or ("." not in text and ":" not in text):
        return None
    module = text.partition(":")[0]
    return module if module.split(".")[0] in OURS else None


def dependencies(path: Path, name: str) -> list[Dependency]:
    """Every module the file names, by import (absolute, resolved) or by string."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    is_package = path.name == "__init__.py"
    declared = {id(node) for kw in ast.walk(tree) if isinstance(kw, ast.keyword) and kw.arg == DECLARATION_KEYWORD
                for node in ast.walk(kw.value)}
    out: list[Dependency] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend(Dependency(name, alias.name, "import", node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            out.append(Dependency(name, target, "import", node.lineno))
            out.extend(Dependency(name, f"{target}.{alias.name}", "import", node.lineno) for alias in node.names)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            target = _string_target(node.value)
            if target is not None and target != name:
                out.append(Dependency(name, target, "declaration" if id(node) in declared else "string",
                                      node.lineno))
    return out


def all_dependencies(root: Path) -> list[Dependency]:
    return [dep for name, path in library_modules(root).items() for dep in dependencies(path, name)]


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def is_cli(module: str) -> bool:
    """The CLI layer: harness.cli and the plug-ins' command modules."""
    return _within(module, "harness.cli") or (
        module.split(".")[-1] == "cli" and (_within(module, "harness.variants") or _within(module, "executors")))


def executor_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if parts[0] == "executors" and len(parts) > 1 else None


def shared_packages(root: Path) -> set[str]:
    """The packages under executors/ whose `__init__.py` sets `SHARED = True`."""
    found = set()
    for init in sorted((root / "executors").glob("*/__init__.py")) if (root / "executors").is_dir() else []:
        for node in ast.parse(init.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "SHARED" for t in node.targets) \
                    and isinstance(node.value, ast.Constant) and node.value.value is True:
                found.add(init.parent.name)
    return found


def violation(dep: Dependency, shared: frozenset[str] = frozenset()) -> str | None:
    """Which rule of the module doc `dep` breaks, if any (`shared`: the shared packages' names)."""
    source, target = dep.source, dep.target
    if is_cli(target) and not is_cli(source) and dep.kind != "declaration":
        return "library -> CLI"
    if is_cli(source) and not _within(source, "harness.cli") and _within(target, "harness.cli") \
            and not _within(target, "harness.cli.conventions") and target != "harness.cli":
        return "plug-in command module -> CLI internals (only harness.cli.conventions)"
    if executor_of(source) and executor_of(target) and executor_of(source) != executor_of(target):
        if executor_of(source) in shared and executor_of(target) not in shared:
            return "shared package -> executor"
        if executor_of(target) not in shared:
            return "executor -> another executor"
    if _within(target, "tests"):
        return "production -> tests"
    if _within(source, "harness.canvas") and (_within(target, "harness.models") or _within(target, "executors")):
        return "canvas -> models/executors"
    if target.split(".")[0] not in OURS:
        return None
    if _within(source, "harness.sandbox") and not (_within(target, "harness.sandbox") or _within(target, "harness.pysource")):
        return "the sandbox core -> a layer above it"
    if source == "harness.models.loopback":
        return "the loopback server base -> any other module"
    return None


def violations(root: Path) -> list[str]:
    shared = frozenset(shared_packages(root))
    return sorted(f"{dep}: {rule}" for dep in all_dependencies(root) if (rule := violation(dep, shared)))
