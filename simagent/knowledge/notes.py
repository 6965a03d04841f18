"""simagent's own method notes as Documents, generated from the code and data that define them
(never written by hand, so they cannot drift): the protocol registry (what each protocol does, its
parameters, defaults and their documented reasons), the physics gates and checks (module docstrings
and the commented thresholds), the citations in the force-field and potential metadata, and the
README files."""

from __future__ import annotations

import ast
import io
import json
import tokenize
from pathlib import Path

from simagent.knowledge.documents import Document, Section
from simagent.paths import forcefields_dir, potentials_dir

REPO = Path(__file__).resolve().parents[2]
CHECK_MODULES = ["simagent/gates.py", "simagent/stats.py", "tools/lammps/check.py", "tools/gromacs/check.py",
                 "tools/raspa/check.py", "tools/gromacs/mdp.py"]


def _rel(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(REPO))
    except ValueError:
        return str(path)


def _field_line(name: str, field) -> str:
    default = "required" if field.is_required() else f"default {field.default!r}" \
        if field.default_factory is None else "default computed"
    desc = f": {field.description}" if field.description else ""
    return f"- {name} ({default}){desc}"


def protocol_documents() -> list[Document]:
    import inspect

    from simagent.protocols import all_protocols

    docs = []
    for protocol in all_protocols():
        cls = type(protocol)
        module_file = Path(inspect.getfile(cls))
        text = [f"simagent protocol {protocol.name} runs on the {protocol.engine} engine. {protocol.description}."]
        if cls.__doc__ and cls.__doc__ is not type(protocol).__mro__[1].__doc__:
            text.append(inspect.cleandoc(cls.__doc__))
        text.append("Properties it answers: " + ", ".join(sorted(protocol.properties)) + ".")
        sections = [Section(title="What it does", text="\n\n".join(text))]
        params = protocol.Params
        lines = [_field_line(name, field) for name, field in params.model_fields.items()]
        head = inspect.cleandoc(params.__doc__) + "\n" if params.__doc__ else ""
        sections.append(Section(title="Parameters and defaults", text=head + "\n".join(lines)))
        docs.append(Document(source=_rel(module_file) + f"#{protocol.name}", title=f"Protocol {protocol.name}",
                             kind="notes", sections=sections))
    return docs


def _comments_before(source: str) -> dict[int, str]:
    """Line number -> the block of '#' comment lines that ends just above it."""
    comments: dict[int, str] = {}
    block: list[str] = []
    last = -1
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT and tok.start[1] == 0:
            if tok.start[0] != last + 1:
                block = []
            block.append(tok.string.lstrip("# ").rstrip())
            last = tok.start[0]
            comments[last + 1] = " ".join(block)
    return comments


def module_document(path: Path) -> Document | None:
    """A module's docstring, its commented module-level constants and its documented functions."""
    source = path.read_text()
    tree = ast.parse(source)
    comments = _comments_before(source)
    sections = []
    doc = ast.get_docstring(tree)
    if doc:
        sections.append(Section(title="Overview", text=doc))
    constants = []
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.lineno in comments:
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target
            if isinstance(target, ast.Name) and target.id.isupper():
                value = ast.get_source_segment(source, node.value) or ""
                constants.append(f"{target.id} = {value[:200]}: {comments[node.lineno]}")
        elif isinstance(node, ast.FunctionDef | ast.ClassDef) and not node.name.startswith("_"):
            fdoc = ast.get_docstring(node)
            if fdoc:
                sections.append(Section(title=node.name, text=fdoc))
    if constants:
        sections.insert(1 if doc else 0, Section(title="Thresholds and constants", text="\n\n".join(constants)))
    if not sections:
        return None
    return Document(source=_rel(path), title=f"simagent module {_rel(path)}", kind="notes", sections=sections)


def _scalars(entry: dict) -> str:
    parts = []
    for key, value in entry.items():
        if isinstance(value, str | int | float | bool) and key not in ("sha256",):
            parts.append(f"{key}: {value}")
        elif isinstance(value, list) and all(isinstance(v, str | int | float) for v in value) and len(value) <= 12:
            parts.append(f"{key}: {', '.join(map(str, value))}")
        elif isinstance(value, dict | list):
            compact = json.dumps(value, separators=(",", ":"))
            parts.append(f"{key}: {compact[:300]}{'...' if len(compact) > 300 else ''}")
    return "; ".join(parts)


def citation_document(path: Path, what: str) -> Document:
    """Every entry of a metadata JSON file that carries a citation, titled by its name or path."""
    data = json.loads(path.read_text())
    sections = []
    if isinstance(data, dict) and isinstance(data.get("description") or data.get("about"), str):
        sections.append(Section(title="About", text=data.get("description") or data.get("about")))

    def walk(node, trail: list[str]) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("citation"), str):
                name = node.get("file") or node.get("name") or " > ".join(trail[-3:])
                sections.append(Section(title=str(name), text=f"{what} {name}. {_scalars(node)}"))
                return
            for key, value in node.items():
                walk(value, [*trail, str(key)])
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, [*trail, str(i)])

    walk(data, [])
    return Document(source=_rel(path), title=f"simagent data {_rel(path)}", kind="notes", sections=sections)


def data_documents() -> list[Document]:
    docs = [citation_document(p, "Force-field entry") for p in sorted(forcefields_dir().glob("*.json"))]
    docs += [citation_document(p, "LAMMPS potential file") for p in sorted(potentials_dir().glob("*.json"))]
    return [d for d in docs if len(d.sections) > 1 or (d.sections and d.sections[0].title != "About")]


def readme_paths() -> list[Path]:
    return [p for p in (REPO / "README.md", potentials_dir() / "README.md") if p.is_file()]


def note_documents() -> list[Document]:
    docs = protocol_documents()
    docs += [d for d in (module_document(REPO / m) for m in CHECK_MODULES if (REPO / m).is_file()) if d]
    return docs + data_documents()
