"""Decision backends behind one interface (simagent.backends.base.DecisionBackend)."""

from __future__ import annotations

from simagent.backends.base import DecisionBackend
from simagent.config import Settings
from simagent.errors import RequestError


def get_backend(settings: Settings) -> DecisionBackend:
    name = settings.resolved_backend
    if name == "expert":
        from simagent.backends.expert import ExpertBackend

        return ExpertBackend()
    if name == "openai":
        if not settings.base_url:
            raise RequestError("the openai backend needs an endpoint: set SIMAGENT_BASE_URL "
                               "(and SIMAGENT_MODEL, SIMAGENT_API_KEY if the server needs them)")
        from simagent.backends.openai_backend import OpenAIBackend

        return OpenAIBackend(settings)
    if name == "local":
        from simagent.backends.local import LocalBackend

        return LocalBackend(settings)
    if name == "hybrid":
        from simagent.backends.hybrid import HybridBackend

        return HybridBackend(settings)  # the LLM starts on the first request the rules are unsure of
    raise RequestError(f"unknown backend {name!r}; choose 'expert', 'openai', 'local' or 'hybrid'")
