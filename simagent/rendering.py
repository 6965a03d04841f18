"""Engine inputs from Jinja2 templates shipped in an engine package's templates/ folder.

Templates are strict: an undefined parameter is an error, never an empty string in an input."""

from __future__ import annotations

from functools import cache

import jinja2


@cache
def environment(package: str) -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader(package, "templates"),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )


def render_template(package: str, template: str, **params: object) -> str:
    """Render <package>/templates/<template> with the given parameters."""
    return environment(package).get_template(template).render(**params)
