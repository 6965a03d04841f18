"""Direct calls into the Zeo++ routines compiled into pyzeo 0.2.0, for what its Python layer does
slowly or not at all. Import only in the child process (tools.zeopp.run): a crash here ends that
process, never simagent.

Why: `AtomNetwork.calculate_free_sphere_parameters` first builds a list of Voronoi edge centres with
an O(E^2) Python loop (over a minute for a 120-atom MOF with the high-accuracy DEF network), and
`VoronoiNetwork.perform_voronoi_decomposition` fails in pyzeo 0.2.0 (it reads a C-level attribute
from Python). The compiled Zeo++ functions behind them are exported from the extension module:
performVoronoiDecomp (network.cc), calculateFreeSphereParameters (-res/-resex output) and
writeToNt2 (-nt2 output). We call them with ctypes on the C++ objects that pyzeo's wrapper classes
hold as their first field (`thisptr`, right after the CPython object header).
"""

from __future__ import annotations

import ctypes
import sys
from importlib import metadata

SUPPORTED_PYZEO = "0.2.0"  # the object layout and symbol names below were checked for this build
_DECOMP = ("_Z20performVoronoiDecompbP12ATOM_NETWORKP15VORONOI_NETWORKPSt6vectorI8VOR_CELLSaIS4_EEbPS3_I11"
           "BASIC_VCELLSaIS8_EE")
_FREE_SPHERE = "_Z29calculateFreeSphereParametersP15VORONOI_NETWORKPcb"
_NT2 = "_Z10writeToNt2PcP15VORONOI_NETWORKd"
_HEADER = 2 * ctypes.sizeof(ctypes.c_void_p)  # PyObject_HEAD: refcount + type pointer


class NativeUnavailable(RuntimeError):
    """This pyzeo build does not offer the compiled routines (use pyzeo's own, slower methods)."""


def _library():
    try:
        version = metadata.version("pyzeo")
    except metadata.PackageNotFoundError as err:
        raise NativeUnavailable("pyzeo is not installed") from err
    if version != SUPPORTED_PYZEO or sys.implementation.name != "cpython":
        raise NativeUnavailable(f"pyzeo {version} on {sys.implementation.name}: only {SUPPORTED_PYZEO} "
                                "on CPython was checked")
    import pyzeo.extension as extension

    lib = ctypes.CDLL(extension.__file__)
    try:
        decomp = getattr(lib, _DECOMP)
        free_sphere = getattr(lib, _FREE_SPHERE)
        nt2 = getattr(lib, _NT2)
    except AttributeError as err:
        raise NativeUnavailable(f"symbol missing from {extension.__file__}: {err}") from err
    decomp.argtypes = [ctypes.c_bool, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_bool,
                       ctypes.c_void_p]
    decomp.restype = ctypes.c_bool
    free_sphere.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_bool]
    free_sphere.restype = None
    nt2.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_double]
    nt2.restype = ctypes.c_bool
    return extension, decomp, free_sphere, nt2


def _thisptr(obj) -> int:
    pointer = ctypes.c_void_p.from_address(id(obj) + _HEADER).value
    if not pointer:
        raise NativeUnavailable(f"{type(obj).__name__} holds no C++ object")
    return pointer


class VoronoiDecomposition:
    """Zeo++'s Voronoi network of an AtomNetwork (use the high-accuracy one, as `network -ha`)."""

    def __init__(self, atom_network) -> None:
        extension, decomp, self._free_sphere, self._nt2 = _library()
        self._atoms = atom_network  # keep alive: the network points into it
        self._network = extension.VoronoiNetwork()
        # Empty std::vector<VOR_CELL> and std::vector<BASIC_VCELL> (three null pointers each in
        # libstdc++); saveVorCells=False, so Zeo++ leaves them empty. The buffers are never freed
        # by C++: this object owns them.
        self._cells = ctypes.create_string_buffer(64)
        self._basic_cells = ctypes.create_string_buffer(64)
        ok = decomp(True, _thisptr(atom_network), _thisptr(self._network), ctypes.addressof(self._cells), False,
                    ctypes.addressof(self._basic_cells))
        if not ok:
            raise RuntimeError("Zeo++ Voronoi decomposition failed")

    @property
    def size(self) -> int:
        return self._network.size()

    def free_sphere_file(self, filename: str, extended: bool = True) -> None:
        """Zeo++ -res (extended: -resex) output: Di Df Dif [Df_a Df_b Df_c Dif_a Dif_b Dif_c]."""
        self._free_sphere(_thisptr(self._network), filename.encode(), extended)

    def nt2_file(self, filename: str, min_radius: float = 0.0) -> None:
        """Zeo++ -nt2 output: nodes (x y z radius) and edges (radius, unit-cell shift)."""
        if not self._nt2(filename.encode(), _thisptr(self._network), float(min_radius)):
            raise RuntimeError(f"Zeo++ could not write {filename}")
