"""Reading Zeo++ outputs (text returned by pyzeo or written to files) and the worker's results file.

Formats (Zeo++ manual, "Output formats"): -sa and -vol print `key: value` pairs on three lines
(totals; channels; pockets); -res/-resex print `name Di Df Dif [Df_a Df_b Df_c Dif_a Dif_b Dif_c]`;
-psd writes a histogram with a header; -nt2 writes the Voronoi network ("Vertex table:" lines
`id x y z radius atom_ids...`, "Edge table:" lines `from -> to radius da db dc length`).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from simagent.errors import ReadError

RESULTS_FILE = "zeopp_results.json"
ERROR_FILE = "zeopp_error.json"


def _number(token: str) -> float | None:
    try:
        return float(token)
    except ValueError:
        return None


def parse_key_values(text: str | bytes) -> dict[str, float | list[float]]:
    """`Key: v [v ...]` pairs of Zeo++ -sa / -vol output. Keys repeated on the channel and pocket
    lines (e.g. Channel_surface_area_A^2) get a list of values (one per channel or pocket)."""
    if isinstance(text, bytes):
        text = text.decode(errors="replace")
    values: dict[str, float | list[float]] = {}
    key, numbers = None, []

    def flush() -> None:
        if key is None:
            return
        if key.startswith(("Channel_", "Pocket_")):
            values[key] = list(numbers)
        elif numbers:
            values[key] = numbers[0]

    for token in text.split():
        if token.endswith(":"):
            flush()
            key, numbers = token[:-1], []
        elif key is not None:
            number = _number(token)
            if number is not None:
                numbers.append(number)
    flush()
    return values


def parse_res(text: str) -> dict[str, float]:
    """Di, Df, Dif (and per direction with -resex) from a .res line."""
    fields = text.split()
    numbers = [float(x) for x in fields[1:]]
    if len(numbers) < 3:
        raise ReadError(f"free-sphere output has {len(numbers)} numbers, expected 3 or 9: {text.strip()!r}")
    names = ["Di", "Df", "Dif", "Df_a", "Df_b", "Df_c", "Dif_a", "Dif_b", "Dif_c"]
    return dict(zip(names, numbers, strict=False))


def parse_psd(text: str) -> dict:
    """Header values and the (bin start, count, cumulative, derivative) table of a Zeo++ PSD histogram."""
    header: dict[str, float] = {}
    rows = []
    for line in text.splitlines():
        if ":" in line:
            key, _, value = line.partition(":")
            number = _number(value.strip())
            if number is not None:
                header[key.strip()] = number
            continue
        parts = line.split()
        if len(parts) == 4 and all(_number(p) is not None for p in parts):
            rows.append([float(p) for p in parts])
    if not rows:
        raise ReadError("pore-size distribution histogram has no rows")
    return {"header": header, "rows": rows}


# ---------------------------------------------------------------------------------------------
# Voronoi network: channels, dimensionality, pockets
# ---------------------------------------------------------------------------------------------


@dataclass
class VoronoiGraph:
    ids: np.ndarray  # node ids as in the file
    xyz: np.ndarray  # (n, 3) Cartesian, Zeo++ orientation (a along x, b in the xy plane)
    radius: np.ndarray  # (n,) distance from the node to the nearest atom surface, angstrom
    edges: np.ndarray  # (m, 2) indices into ids
    edge_radius: np.ndarray  # (m,)
    edge_shift: np.ndarray  # (m, 3) unit-cell shift of the second node


def parse_nt2(text: str) -> VoronoiGraph:
    nodes, edges = [], []
    section = None
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("Vertex table"):
            section = "v"
            continue
        if stripped.startswith("Edge table"):
            section = "e"
            continue
        parts = stripped.split()
        if not parts:
            continue
        if section == "v" and len(parts) >= 5:
            nodes.append((int(parts[0]), float(parts[1]), float(parts[2]), float(parts[3]), float(parts[4])))
        elif section == "e" and len(parts) >= 7 and parts[1] == "->":
            edges.append((int(parts[0]), int(parts[2]), float(parts[3]), int(parts[4]), int(parts[5]), int(parts[6])))
    if not nodes:  # a dense structure: no void at all
        return VoronoiGraph(ids=np.zeros(0, int), xyz=np.zeros((0, 3)), radius=np.zeros(0),
                            edges=np.zeros((0, 2), int), edge_radius=np.zeros(0), edge_shift=np.zeros((0, 3), int))
    node_array = np.array(nodes, dtype=float)
    ids = node_array[:, 0].astype(int)
    position = {node_id: i for i, node_id in enumerate(ids)}
    kept = [e for e in edges if e[0] in position and e[1] in position]
    edge_array = np.array(kept, dtype=float).reshape(-1, 6)
    return VoronoiGraph(
        ids=ids, xyz=node_array[:, 1:4], radius=node_array[:, 4],
        edges=np.array([[position[int(a)], position[int(b)]] for a, b in edge_array[:, :2]], dtype=int).reshape(-1, 2),
        edge_radius=edge_array[:, 2], edge_shift=edge_array[:, 3:6].astype(int),
    )


@dataclass
class PoreSystem:
    nodes: list[int]
    dimensionality: int  # 0: pocket (isolated), 1-3: channel percolating in that many directions
    largest_node_radius: float


@dataclass
class ChannelReport:
    probe_radius: float
    channels: list[PoreSystem] = field(default_factory=list)
    pockets: list[PoreSystem] = field(default_factory=list)

    @property
    def dimensionality(self) -> int:
        return max((c.dimensionality for c in self.channels), default=0)


def _integer_rank(vectors: list[tuple[int, int, int]]) -> int:
    if not vectors:
        return 0
    return int(np.linalg.matrix_rank(np.array(vectors, dtype=float)))


def channels(graph: VoronoiGraph, probe_radius: float) -> ChannelReport:
    """Channels and pockets for a spherical probe: the Voronoi nodes and edges wider than the probe,
    joined with a periodic union-find that keeps each node's unit-cell offset from its root. A cycle
    that returns to a node in another unit cell is a percolation direction; the rank of those
    lattice vectors is the channel's dimensionality (Zeo++ -chan counts the same way)."""
    n = len(graph.ids)
    open_node = graph.radius > probe_radius
    parent = list(range(n))
    offset = [(0, 0, 0)] * n  # offset of each node from its parent, in unit cells

    def find(i: int) -> tuple[int, tuple[int, int, int]]:
        path = []
        while parent[i] != i:
            path.append(i)
            i = parent[i]
        root = i
        x = y = z = 0
        for node in reversed(path):  # compress: offsets add up from the root down to the node
            dx, dy, dz = offset[node]
            x, y, z = x + dx, y + dy, z + dz
            offset[node] = (x, y, z)
            parent[node] = root
        return root, offset[path[0]] if path else (0, 0, 0)

    cycles: dict[int, list[tuple[int, int, int]]] = {}
    passable = (graph.edge_radius > probe_radius) & open_node[graph.edges[:, 0]] & open_node[graph.edges[:, 1]]
    for (a, b), (sx, sy, sz) in zip(graph.edges[passable].tolist(), graph.edge_shift[passable].tolist(), strict=True):
        root_a, (ax, ay, az) = find(a)
        root_b, (bx, by, bz) = find(b)
        loop = (ax + sx - bx, ay + sy - by, az + sz - bz)
        if root_a != root_b:
            # place b's image next to a: offset(b) = offset(a) + shift
            parent[root_b] = root_a
            offset[root_b] = loop
            cycles.setdefault(root_a, []).extend(cycles.pop(root_b, []))
        elif any(loop):
            cycles.setdefault(root_a, []).append(loop)
    members: dict[int, list[int]] = {}
    for i in np.flatnonzero(open_node):
        root, _ = find(int(i))
        members.setdefault(root, []).append(int(i))
    report = ChannelReport(probe_radius=probe_radius)
    for root, nodes in members.items():
        dim = _integer_rank(cycles.get(root, []))
        system = PoreSystem(nodes=nodes, dimensionality=dim, largest_node_radius=float(graph.radius[nodes].max()))
        (report.channels if dim > 0 else report.pockets).append(system)
    report.channels.sort(key=lambda s: -s.largest_node_radius)
    report.pockets.sort(key=lambda s: -s.largest_node_radius)
    return report


def blocking_spheres(graph: VoronoiGraph, report: ChannelReport, to_fractional: np.ndarray) -> list[list[float]]:
    """Spheres (fractional x y z, radius in angstrom) that cover the pockets a probe cannot reach
    from a channel, for adsorption codes that must not insert molecules there (RASPA BlockPockets).
    Greedy cover of each pocket's Voronoi nodes: take the widest node not yet inside a sphere, its
    sphere is the node's empty sphere (radius = distance to the nearest atom surface); repeat."""
    spheres = []
    for pocket in report.pockets:
        order = sorted(pocket.nodes, key=lambda i: -graph.radius[i])
        chosen: list[int] = []
        for node in order:
            if any(np.linalg.norm(graph.xyz[node] - graph.xyz[c]) < graph.radius[c] for c in chosen):
                continue
            chosen.append(node)
        for node in chosen:
            frac = (graph.xyz[node] @ to_fractional) % 1.0
            spheres.append([*(round(float(x), 6) for x in frac), round(float(graph.radius[node]), 4)])
    return spheres


def zeo_cell_matrix(a: float, b: float, c: float, alpha: float, beta: float, gamma: float) -> np.ndarray:
    """Rows: cell vectors in Zeo++'s orientation (a along x, b in the xy plane)."""
    ca, cb, cg = (math.cos(math.radians(x)) for x in (alpha, beta, gamma))
    sg = math.sin(math.radians(gamma))
    cy = (ca - cb * cg) / sg
    cz = math.sqrt(max(0.0, 1 - cb * cb - cy * cy))
    return np.array([[a, 0, 0], [b * cg, b * sg, 0], [c * cb, c * cy, c * cz]])


# ---------------------------------------------------------------------------------------------
# The worker's results
# ---------------------------------------------------------------------------------------------


def read_results(job_dir: Path) -> dict:
    """zeopp_results.json of a finished job; ReadError names what is missing."""
    path = Path(job_dir) / RESULTS_FILE
    if not path.is_file():
        error = Path(job_dir) / ERROR_FILE
        if error.is_file():
            try:
                detail = json.loads(error.read_text()).get("message", "")
            except ValueError:
                detail = error.read_text()[:300]
            raise ReadError(f"Zeo++ job in {job_dir} failed: {detail}")
        raise ReadError(f"no {RESULTS_FILE} in {job_dir}")
    try:
        return json.loads(path.read_text())
    except ValueError as err:
        raise ReadError(f"{path} is not valid JSON: {err}") from None
