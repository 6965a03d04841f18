"""Rendering LAMMPS inputs from the protocol templates in tools/lammps/templates (Jinja2).

Templates are strict: an undefined parameter is an error, never an empty string in an input."""

from __future__ import annotations

from simagent.rendering import render_template


def render(template: str, **params: object) -> str:
    """Render templates/<template> with the given parameters."""
    return render_template("tools.lammps", template, **params)
