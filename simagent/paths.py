"""Where simagent's data folders are, in an editable checkout or a non-editable install alike."""

from __future__ import annotations

import os
from importlib.resources import files
from pathlib import Path


def data_dir(package: str) -> Path:
    """Folder of a data package: 'potentials', 'forcefields' or 'rag_index'."""
    return Path(str(files(package)))


def potentials_dir() -> Path:
    return data_dir("potentials")


def forcefields_dir() -> Path:
    return data_dir("forcefields")


def rag_index_dir() -> Path:
    return data_dir("rag_index")


def cache_dir() -> Path:
    """Derived data kept between runs (extracted CIFs, framework charges): $SIMAGENT_CACHE, else
    $XDG_CACHE_HOME/simagent, else ~/.cache/simagent."""
    explicit = os.environ.get("SIMAGENT_CACHE")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "simagent"


def user_data_dir() -> Path:
    """The user's own data (e.g. their literature index): $SIMAGENT_DATA, else
    $XDG_DATA_HOME/simagent, else ~/.local/share/simagent."""
    explicit = os.environ.get("SIMAGENT_DATA")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_DATA_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".local" / "share") / "simagent"
