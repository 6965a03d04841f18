"""Rendering LAMMPS inputs from the protocol templates in tools/lammps/templates (Jinja2).

Templates are strict: an undefined parameter is an error, never an empty string in an input."""

from __future__ import annotations

from functools import lru_cache

import jinja2


@lru_cache(maxsize=1)
def _env() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("tools.lammps", "templates"),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )


def render(template: str, **params: object) -> str:
    """Render templates/<template> with the given parameters."""
    return _env().get_template(template).render(**params)
