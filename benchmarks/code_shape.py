"""The shape of the code, measured: the largest functions, the package import graph, and the places
that name an engine. Reads the source with `ast` (imports nothing of simagent), so it runs anywhere:

    python benchmarks/code_shape.py              # all three
    python benchmarks/code_shape.py functions    # the 15 largest functions (name, lines)
    python benchmarks/code_shape.py imports      # package -> packages it imports (module-level and lazy)
    python benchmarks/code_shape.py engines      # lines that name an engine as a string literal
"""

from __future__ import annotations

import ast
import re
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("simagent", "agents", "tools")
ENGINE_NAMES = ("lammps", "gromacs", "raspa", "zeopp")


def sources(packages: tuple[str, ...] = PACKAGES) -> list[Path]:
    return sorted(p for package in packages for p in (ROOT / package).rglob("*.py"))


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def largest_functions(count: int = 15) -> list[tuple[str, int]]:
    sizes = []
    for path in sources():
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                sizes.append((f"{module_name(path)}.{node.name}", node.end_lineno - node.lineno + 1))
    return sorted(sizes, key=lambda item: -item[1])[:count]


def imported_modules(path: Path) -> set[str]:
    """Every module a file imports (at any depth: lazy imports inside functions count too)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return found


def group(module: str) -> str | None:
    """The package a module belongs to in the layer picture: tools.<engine>, agents, simagent.<sub>."""
    parts = module.split(".")
    if parts[0] == "tools" and len(parts) > 1:
        return f"tools.{parts[1]}"
    if parts[0] == "simagent" and len(parts) > 1:
        return f"simagent.{parts[1]}"
    if parts[0] in ("agents", "simagent", "tools"):
        return parts[0]
    return None


def import_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = defaultdict(set)
    for path in sources():
        source = group(module_name(path))
        for target in imported_modules(path):
            target_group = group(target)
            if target_group and target_group != source and (ROOT / target.split(".")[0]).is_dir():
                graph[source].add(target_group)
    return graph


_ENGINE_LITERAL = re.compile("[\"'](" + "|".join(ENGINE_NAMES) + ")[\"'/]")


def engine_mentions() -> list[str]:
    """Code lines (not comments or docstrings' prose) with an engine name as a string literal, e.g.
    `job.engine == "lammps"` or `"raspa/adsorption"`: each is a place that knows an engine by name."""
    hits = []
    for path in sources(("simagent", "agents")):
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            code = line.split("#", 1)[0]
            if _ENGINE_LITERAL.search(code):
                hits.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    return hits


def main(argv: list[str]) -> int:
    what = argv[0] if argv else "all"
    if what in ("all", "functions"):
        print("largest functions (lines):")
        for name, lines in largest_functions():
            print(f"  {lines:4d}  {name}")
    if what in ("all", "imports"):
        print("import graph (package -> packages it imports):")
        for source, targets in sorted(import_graph().items()):
            print(f"  {source} -> {', '.join(sorted(targets))}")
    if what in ("all", "engines"):
        hits = engine_mentions()
        print(f"places in simagent/ and agents/ that name an engine as a string: {len(hits)}")
        if what == "engines":
            print("\n".join(f"  {hit}" for hit in hits))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
