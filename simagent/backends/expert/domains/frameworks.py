"""Expert-reader domain module (see domains/__init__.py)."""

from simagent.models import TaskSpec


def refine(text: str, low: str, spec: TaskSpec) -> None:
    return None
