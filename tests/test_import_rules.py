"""Imports point down (run by `make lint` and the fast suite; reads the source with ast, imports
nothing): engine adapters (tools/) know nothing of agents/ or the graph, simagent's core (every module
of simagent/ except the drivers below, simagent/materials and simagent/described included) knows
nothing of engines or agents, and an engine does not reach into another engine's package.

The allowed edges, all of them:
- agents/ and the drivers (GRAPH) may import anything below them: agents/, tools/, the core;
- tools/<engine> imports the core and its own package (and the shared top-level tools/*.py modules);
- the core reaches an engine only through simagent.engines' registry, which loads each
  tools/<engine>/adapter.py by the module path listed in BUILTIN_ENGINES: no static import of tools/,
  and no `__import__`/`importlib.import_module` of a tools.* name anywhere else in the core;
- a cross-engine import only when listed in CROSS_ENGINE_ALLOWED with its reason (none today).
"""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# The drivers: what runs the graph or drives it from outside (CLI, web, benchmarks harness). Only
# agents/ and these may import agents/ or tools/ directly; everything else in simagent/ is the core.
GRAPH = ("agents", "simagent.graph", "simagent.session", "simagent.state", "simagent.cli", "simagent.usercli",
         "simagent.solve", "simagent.bench", "simagent.web")
# Imports of another engine's package that are known and left for their owners to move down
# (each names its reason); everything else across engines fails.
CROSS_ENGINE_ALLOWED: dict[tuple[str, str], str] = {}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import in a file, lazy ones inside functions included; an import by
    name (`__import__(...)`, `import_module(...)`) is listed with the source text of its argument."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and node.args and _called(node) in ("__import__", "import_module"):
            found.append((node.lineno, ast.unparse(node.args[0]).strip("'\"f")))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
    return found


def _called(call: ast.Call) -> str:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def within(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def engine_of(module: str) -> str | None:
    """tools.<engine> for a module of an engine package (top-level tools/*.py modules are shared)."""
    parts = module.split(".")
    if parts[0] == "tools" and len(parts) >= 2 and (ROOT / "tools" / parts[1]).is_dir():
        return ".".join(parts[:2])
    return None


def violations() -> list[str]:
    found: dict[tuple[str, int, str], str] = {}  # one report per line and rule
    for path in sorted((ROOT / "tools").rglob("*.py")) + sorted((ROOT / "simagent").rglob("*.py")):
        source = module_name(path)
        for line, target in imports(path):
            where = (str(path.relative_to(ROOT)), line)
            rules = []
            if source.startswith("tools") and within(target, GRAPH):
                rules.append("an engine adapter must not know agents/ or the graph")
            if (source.startswith("simagent") and not within(source, GRAPH)
                    and within(target, ("tools", "agents"))):
                rules.append("the core must not import engines or agents (engines: through simagent.engines)")
            mine, theirs = engine_of(source), engine_of(target)
            if mine and theirs and mine != theirs and (mine, theirs) not in CROSS_ENGINE_ALLOWED:
                rules.append("one engine must not import another's code: move the shared part to "
                             "simagent/materials or the core")
            for rule in rules:
                found.setdefault((*where, rule), f"{where[0]}:{line} imports {target} ({rule})")
    return list(found.values())


def test_imports_point_down():
    assert violations() == []


def test_the_check_catches_a_backward_import(tmp_path, monkeypatch):
    """The rule itself: a tools module importing agents, and LAMMPS importing RASPA, are reported."""
    fake = tmp_path / "tools" / "lammps"
    fake.mkdir(parents=True)
    (tmp_path / "tools" / "raspa").mkdir()
    (tmp_path / "simagent").mkdir()
    (fake / "bad.py").write_text("from agents.structure import resolve\n\ndef f():\n    import tools.raspa.check\n")
    monkeypatch.setattr(__import__(__name__), "ROOT", tmp_path)
    found = violations()
    assert len(found) == 2
    assert "agents.structure" in found[0] and "tools.raspa.check" in found[1]


def test_the_check_catches_the_core_importing_an_engine(tmp_path, monkeypatch):
    """A core module (here a simagent/described one) importing an engine adapter, statically or by
    name, is reported; a driver (simagent.cli) may."""
    (tmp_path / "tools" / "lammps").mkdir(parents=True)
    (tmp_path / "simagent" / "described").mkdir(parents=True)
    (tmp_path / "simagent" / "described" / "bad.py").write_text(
        "def f():\n    from tools.lammps.potentials import find_potential\n\n"
        "def g(engine):\n    return __import__(f'tools.{engine}.engine')\n")
    (tmp_path / "simagent" / "cli.py").write_text("from tools.vasp.cli import register\n")
    monkeypatch.setattr(__import__(__name__), "ROOT", tmp_path)
    found = violations()
    assert [f.split(" imports ")[0] for f in found] == ["simagent/described/bad.py:2", "simagent/described/bad.py:5"]
    assert all("the core must not import engines" in f for f in found)
