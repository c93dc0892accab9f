"""The package layout is the pipeline: each folder is one stage, and no module imports from a stage
that comes after its own (data flows one way: inputs -> logs -> topology -> diagnosis -> report)."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "diagdisk"

# Shared ground first, then the stages in the order data flows through them. `collect` produces an
# input (a bundle) from a live host; `fleet` runs the stages over many inputs; `cli` calls every stage.
STAGES = ("diagdisk", "decode", "inputs", "collect", "logs", "topology", "performance", "diagnosis", "report",
          "fleet", "cli")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _stage(module: str) -> int:
    parts = module.split(".")
    if len(parts) > 1 and parts[1] in STAGES and (PACKAGE / parts[1]).is_dir():
        return STAGES.index(parts[1])
    return 0


def _imports(path: Path, module: str) -> set[str]:
    found = set()
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.startswith("diagdisk"):
                found.add(target)
                found.update(f"{target}.{a.name}" for a in node.names
                             if (PACKAGE.parent / f"{target}.{a.name}".replace(".", "/")).is_dir())
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("diagdisk"))
    return found


def test_every_module_imports_only_from_its_own_or_earlier_stages():
    backwards = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "__main__.py":
            continue  # the entry point runs the command line
        module = _module_name(path)
        for target in _imports(path, module):
            if _stage(target) > _stage(module):
                backwards.append(f"{module} imports {target}")
    assert backwards == []


def test_every_stage_folder_says_what_enters_and_leaves():
    for stage in STAGES[1:]:
        doc = ast.get_docstring(ast.parse((PACKAGE / stage / "__init__.py").read_text())) or ""
        assert doc, f"diagdisk/{stage}/__init__.py has no docstring"
        assert "enter" in doc and "leave" in doc, f"diagdisk/{stage}: say what enters and what leaves"
