"""Probe-occupiable volume on a grid (numpy/scipy; pyzeo 0.2.0 does not expose Zeo++'s -volpo).

Definition (Ongari, Boyd, Barthel, Witman, Haranczyk, Smit, Langmuir 33, 14529 (2017)): the volume
that a spherical probe of radius r can occupy = the union of all probe spheres whose centre is at
least R_atom + r from every atom. Method: mark grid points where a probe centre fits (atom radii:
Zeo++'s defaults, passed in by the worker), split them into channel and pocket regions by periodic
connectivity (a region that reaches its own image in another cell is a channel), then dilate each
region by r with a periodic FFT convolution. Accuracy is set by the grid spacing (default 0.2 A).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import ndimage

DEFAULT_SPACING = 0.2  # angstrom


def _grid_shape(matrix: np.ndarray, spacing: float) -> tuple[int, int, int]:
    return tuple(max(8, math.ceil(float(np.linalg.norm(v)) / spacing)) for v in matrix)


def _centre_allowed(frac: np.ndarray, radii: np.ndarray, matrix: np.ndarray, probe: float,
                    shape: tuple[int, int, int]) -> np.ndarray:
    """True where a probe centre is at least radius + probe from every atom."""
    n = np.array(shape)
    forbidden = np.zeros(shape, dtype=bool)
    reciprocal = np.linalg.inv(matrix)  # columns: reciprocal vectors (fractional per angstrom)
    widths = np.linalg.norm(reciprocal, axis=0)
    for f, r in zip(frac, radii, strict=True):
        reach = r + probe
        half = np.ceil(reach * widths * n).astype(int) + 1
        centre = np.floor(f * n).astype(int)
        axes = [np.arange(c - h, c + h + 1) for c, h in zip(centre, half, strict=True)]
        di, dj, dk = np.meshgrid(*axes, indexing="ij", sparse=True)
        d_frac = [di / n[0] - f[0], dj / n[1] - f[1], dk / n[2] - f[2]]
        cart = [d_frac[0] * matrix[0, k] + d_frac[1] * matrix[1, k] + d_frac[2] * matrix[2, k] for k in range(3)]
        inside = cart[0] ** 2 + cart[1] ** 2 + cart[2] ** 2 < reach * reach
        idx = np.ix_(axes[0] % n[0], axes[1] % n[1], axes[2] % n[2])
        forbidden[idx] |= inside
    return ~forbidden


def _percolating_labels(mask: np.ndarray) -> tuple[np.ndarray, set[int]]:
    """Labels of face-connected regions and the set of labels that percolate through the periodic cell."""
    labels, count = ndimage.label(mask)
    parent = list(range(count + 1))
    offset = [(0, 0, 0)] * (count + 1)

    def find(i: int):
        path = []
        while parent[i] != i:
            path.append(i)
            i = parent[i]
        x = y = z = 0
        for node in reversed(path):
            dx, dy, dz = offset[node]
            x, y, z = x + dx, y + dy, z + dz
            offset[node] = (x, y, z)
            parent[node] = i
        return i, offset[path[0]] if path else (0, 0, 0)

    loops: dict[int, bool] = {}
    for axis in range(3):
        last = np.take(labels, -1, axis=axis)
        first = np.take(labels, 0, axis=axis)
        both = (last > 0) & (first > 0)
        shift = [0, 0, 0]
        shift[axis] = 1
        for a, b in set(zip(last[both].tolist(), first[both].tolist(), strict=True)):
            ra, (ax, ay, az) = find(a)
            rb, (bx, by, bz) = find(b)
            loop = (ax + shift[0] - bx, ay + shift[1] - by, az + shift[2] - bz)
            if ra != rb:
                parent[rb] = ra
                offset[rb] = loop
                loops[ra] = loops.get(ra, False) or loops.pop(rb, False)
            elif any(loop):
                loops[ra] = True
    percolating = {i for i in range(1, count + 1) if loops.get(find(i)[0], False)}
    return labels, percolating


def _dilate(mask: np.ndarray, matrix: np.ndarray, radius: float) -> np.ndarray:
    """Periodic dilation of a grid mask by a sphere of `radius` angstrom (FFT convolution)."""
    if radius <= 0 or not mask.any():
        return mask.copy()
    n = np.array(mask.shape)
    reciprocal = np.linalg.inv(matrix)
    half = np.ceil(radius * np.linalg.norm(reciprocal, axis=0) * n).astype(int) + 1
    kernel = np.zeros(mask.shape)
    axes = [np.arange(-h, h + 1) for h in half]
    di, dj, dk = np.meshgrid(*axes, indexing="ij", sparse=True)
    cart = [di / n[0] * matrix[0, k] + dj / n[1] * matrix[1, k] + dk / n[2] * matrix[2, k] for k in range(3)]
    ball = cart[0] ** 2 + cart[1] ** 2 + cart[2] ** 2 <= radius * radius
    kernel[np.ix_(axes[0] % n[0], axes[1] % n[1], axes[2] % n[2])] = ball
    product = np.fft.irfftn(np.fft.rfftn(mask.astype(float)) * np.fft.rfftn(kernel), s=mask.shape)
    return product > 0.5


def probe_occupiable_volume(frac: np.ndarray, radii: np.ndarray, matrix: np.ndarray, probe_radius: float,
                            spacing: float = DEFAULT_SPACING) -> dict[str, float]:
    """Occupiable volume fractions of the cell: accessible (channels), non-accessible (pockets), total."""
    shape = _grid_shape(matrix, spacing)
    allowed = _centre_allowed(np.asarray(frac, float) % 1.0, np.asarray(radii, float), matrix, probe_radius, shape)
    labels, percolating = _percolating_labels(allowed)
    channel = np.isin(labels, list(percolating)) if percolating else np.zeros(shape, bool)
    pocket = allowed & ~channel
    occupied_channel = _dilate(channel, matrix, probe_radius)
    occupied_all = _dilate(allowed, matrix, probe_radius)
    return {
        "grid": list(shape),
        "spacing_A": spacing,
        "POAV_fraction": float(occupied_channel.mean()),
        "PONAV_fraction": float((occupied_all & ~occupied_channel).mean()),
        "POV_fraction": float(occupied_all.mean()),
        "centre_accessible_fraction": float(channel.mean()),
        "pocket_centre_fraction": float(pocket.mean()),
    }
