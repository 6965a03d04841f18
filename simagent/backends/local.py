"""The `local` decision backend: a real language model, offline, through llama.cpp's own server.

simagent starts llama.cpp's server in-process (PyPI `xllamacpp`) on 127.0.0.1 with the packaged
Qwen2.5-Coder model (simagent.backends.model_store), or uses a server the user runs
(SIMAGENT_LOCAL_URL), and talks to it with OpenAIBackend's client, strict JSON schemas, retries
and error handling: LocalBackend only adds the server's lifecycle and a compact reading of the
request.

Why a compact reading: a strict TaskSpec schema makes the model write every field, ~300 tokens,
which a 0.5B-1.5B model on one CPU thread needs 10-60 s for. `RequestReading` carries only what
must be read from the text (properties, material, elements, kind, lattice, conditions, potential),
about 70 tokens on one line; code turns it into a TaskSpec (phase, units style, engine and the
critical gaps are rules, not model output) and checks it with simagent.backends.spec_checks
before it is accepted. A reply that fails a check is re-asked with the problem, like any invalid
reply.
"""

from __future__ import annotations

import atexit
import gc
import json
import logging
import re
import socket
import threading
import time
from collections.abc import Callable
from typing import Any, Literal

import httpx
from pydantic import BaseModel, Field

from simagent.backends import openai_backend
from simagent.backends import prompts as shared_prompts
from simagent.backends.expert import vocabulary as vocab
from simagent.backends.model_store import SMALL_MODEL, check_gguf, ensure_model, model_source
from simagent.backends.openai_backend import OpenAIBackend
from simagent.backends.spec_checks import (
    engine_for,
    required_gaps,
    strip_unstated,
    units_style_for,
    validate_spec,
)
from simagent.config import Settings
from simagent.errors import BackendError
from simagent.models import (
    PotentialSpec,
    PropertyName,
    PropertyRequest,
    Quantity,
    SystemSpec,
    TaskSpec,
)
from simagent.units import normalize_unit

log = logging.getLogger(__name__)

HOST = "127.0.0.1"
READING = "task_reading"
# A one-line RequestReading is ~50-110 tokens; lists and strings are bounded in the schema, so
# 256 only cuts a reply that has gone wrong (finish_reason "length" counts as invalid).
openai_backend.MAX_TOKENS.setdefault(READING, 256)
PROMPT_BATCH = 128  # prompt tokens per batch (LlamaServer._params)
EXTERNAL_CONNECT_GRACE_S = 5.0  # a user-run server that refuses connections this long is down
LOCAL_REQUEST_TIMEOUT_S = 300.0  # one completion on one busy core (1.5B, retries) can take minutes
LOCAL_HINT = (
    "The local model runs on llm_threads CPU thread(s); on a busy machine raise llm_timeout_s (config "
    "file), use the small model (SIMAGENT_MODEL_NAME=qwen2.5-coder-0.5b), or the hybrid or expert "
    "backend (SIMAGENT_BACKEND=hybrid|expert)."
)
# Re-asks after an invalid reply. One: on one CPU thread each attempt costs seconds (tens of
# seconds on a loaded machine) and a small model that fails twice rarely succeeds a third time.
LOCAL_RETRIES = 1

# ---------------------------------------------------------------------------------------------
# What the model fills
# ---------------------------------------------------------------------------------------------

Kind = Literal["crystal", "lj_fluid", "atomic_fluid", "molecular_fluid", "polymer", "framework"]
Lattice = Literal["fcc", "bcc", "hcp", "diamond", "sc"]
Family = Literal["eam", "eam/alloy", "eam/fs", "tersoff", "sw", "meam", "lj"]


class ReadQuantity(BaseModel):
    value: float
    unit: str = Field(max_length=12, description="as written, e.g. K, degC, bar, g/cm3, reduced")


class RequestReading(BaseModel):
    """The facts of a request, as written (bounded lists and strings keep replies short)."""

    properties: list[PropertyName] = Field(max_length=4)
    material: str | None = Field(max_length=40)
    elements: list[str] = Field(max_length=4)
    kind: Kind | None
    lattice: Lattice | None
    temperature: ReadQuantity | None
    pressure: ReadQuantity | None
    density: ReadQuantity | None
    potential: Family | None
    potential_name: str | None = Field(max_length=30)
    guests: list[str] = Field(max_length=3)
    last_step: bool


def _example(request: str, **fields: Any) -> str:
    reading = {
        "properties": [], "material": None, "elements": [], "kind": None, "lattice": None,
        "temperature": None, "pressure": None, "density": None, "potential": None,
        "potential_name": None, "guests": [], "last_step": False,
    }
    reading.update(fields)
    return f"Request: {request}\nJSON: {json.dumps(reading, separators=(',', ':'))}"


# Examples are kept apart from the benchmark's requests (benchmarks/understanding/requests.jsonl).
EXAMPLES = "\n".join([
    _example("Lattice constant of bcc iron with the Mendelev EAM potential",
             properties=["lattice_constant"], material="bcc iron", elements=["Fe"], kind="crystal",
             lattice="bcc", potential="eam", potential_name="Mendelev"),
    _example("Pressure and g(r) of a Lennard-Jones fluid at T* = 1.5, rho* = 0.8; report the final step",
             properties=["pressure", "rdf"], material="Lennard-Jones fluid", kind="lj_fluid",
             temperature={"value": 1.5, "unit": "reduced"}, density={"value": 0.8, "unit": "reduced"},
             potential="lj", last_step=True),
    _example("How fast does liquid krypton diffuse at 130 K and 2.4 g/cc?",
             properties=["self_diffusion_coefficient"], material="liquid krypton", elements=["Kr"],
             kind="atomic_fluid", temperature={"value": 130, "unit": "K"},
             density={"value": 2.4, "unit": "g/cc"}),
    _example("methane loading in ZIF-8 at 300 K and 10 bar", properties=["uptake"], material="ZIF-8",
             kind="framework", temperature={"value": 300, "unit": "K"},
             pressure={"value": 10, "unit": "bar"}, guests=["CH4"]),
    _example("Density of SPC/E water at 310 K", properties=["density"], material="water",
             kind="molecular_fluid", temperature={"value": 310, "unit": "K"}, potential_name="SPC/E"),
    _example("what is the diffusion coefficient?", properties=["self_diffusion_coefficient"]),
])

TASK_READING = f"""\
You read a molecular-simulation request and answer with one line of compact JSON.
- properties: what to compute, from: {shared_prompts.PROPERTY_NAMES}. Each at most once.
  lattice_constant = lattice parameter, cell size; cohesive_energy = binding energy per atom;
  rdf = radial distribution function, g(r), pair correlation; self_diffusion_coefficient =
  diffusion, MSD; coordination_number = neighbours in the first shell; uptake = loading.
- material: the material as the user wrote it; elements: its chemical symbols (Ni, Si, Ar), only
  for elements named in the request.
- kind: crystal (a solid), lj_fluid (Lennard-Jones in reduced units), atomic_fluid (a real
  monatomic liquid or gas such as argon), molecular_fluid (water, methanol), framework (MOF,
  zeolite).
- temperature, pressure, density: copy the number and unit exactly as written (unit "reduced"
  for starred or reduced values). Never convert units.
- potential: the potential family if stated; potential_name: the name the user gives (e.g.
  Foiles, Tersoff, TIP4P/2005).
- guests: adsorbed molecules (CO2, CH4). last_step: true only if the last or final step is asked.
- Use null or [] for anything the request does not state. Never invent values or materials.
Examples:
{EXAMPLES}"""


def reading_to_spec(reading: RequestReading, request: str) -> TaskSpec:
    """Code's half of the decision: a RequestReading -> TaskSpec (phase, units style, engine and
    the critical gaps are rules here, never model output)."""
    low = request.lower()
    at = "last_step" if reading.last_step else "average"
    names = list(dict.fromkeys(reading.properties))
    spec = TaskSpec(request=request, properties=[PropertyRequest(name=n, at=at) for n in names])

    elements = []
    for raw in reading.elements:
        symbol = vocab.element_from_word(raw) or (raw.strip().capitalize() if raw.strip() else "")
        if symbol and symbol not in elements:
            elements.append(symbol)
    kind = reading.kind
    if kind is not None or reading.material or elements:
        if kind is None:  # a material without a kind: the rule the expert reader uses
            kind = "crystal" if elements else None
        if kind is not None:
            spec.system = SystemSpec(
                name=reading.material or " ".join(elements) or kind.replace("_", " "),
                kind=kind,
                elements=[] if kind in ("lj_fluid", "framework", "molecular_fluid") else elements,
                lattice=reading.lattice if kind == "crystal" else None,
                phase=_phase(kind, low),
                structure=_structure(reading.material) if kind == "framework" else None,
                molecule=_molecule(reading.material, low) if kind == "molecular_fluid" else None,
                guests=list(dict.fromkeys(g.strip() for g in reading.guests if g.strip())),
            )

    family = reading.potential
    if family is None and kind == "lj_fluid":
        family = "lj"
    name = reading.potential_name
    if family or name:
        molecular = kind in ("molecular_fluid", "framework")
        spec.potential = PotentialSpec(
            family=None if molecular else family,
            name_hint=None if molecular else name,
            force_field=name if molecular else None,
        )
    for label in ("temperature", "pressure", "density"):
        quantity = getattr(reading, label)
        if quantity is not None:
            unit = quantity.unit.strip() or ("reduced" if kind == "lj_fluid" else "")
            setattr(spec.conditions, label, Quantity(value=quantity.value, unit=_unit(unit)))

    spec.units_style = units_style_for(spec)  # type: ignore[assignment]
    spec.engine = engine_for(spec)  # type: ignore[assignment]
    spec.missing = required_gaps(spec)
    spec.confidence = max(0.0, 1.0 - 0.3 * len(spec.missing))
    return spec


def _structure(material: str | None) -> str | None:
    """A framework's name as the structure to look up; a generic word ('a MOF') names none, which
    leaves the 'structure' gap open so the user is asked."""
    words = set(re.findall(r"[a-z0-9]+", (material or "").lower()))
    if not words or words <= {"a", "an", "the", "mof", "mofs", "framework", "metal", "organic", "zeolite",
                              "porous", "material", "this", "that"}:
        return None
    return material


def _unit(unit: str) -> str:
    if unit.lower() in ("reduced", "lj", "*", "reduced units", "dimensionless", "none"):
        return "reduced"
    return normalize_unit(unit)


def _phase(kind: str, low: str) -> str | None:
    if kind == "crystal" or kind == "framework":
        return "solid"
    if kind == "molecular_fluid":
        return "liquid"
    if re.search(r"\bliquid\b|\bmelt\b|\bmolten\b", low):
        return "liquid"
    if re.search(r"\bgas\b|\bvapou?r\b", low):
        return "gas"
    return "fluid" if kind in ("lj_fluid", "atomic_fluid") else None


def _molecule(material: str | None, low: str) -> str | None:
    if re.search(r"\bwater\b|\bh2o\b|\btip\d|\bspc", low):
        return "water"
    return (material or "").lower().replace("liquid ", "").strip() or None


# ---------------------------------------------------------------------------------------------
# The server
# ---------------------------------------------------------------------------------------------


def _split_url(url: str) -> tuple[str, str]:
    """(server root for /health, OpenAI API base ending in /v1) from a user's URL."""
    root = url.rstrip("/")
    if root.endswith("/v1"):
        root = root[: -len("/v1")]
    return root, root + "/v1"


def port_free(port: int, host: str = HOST) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def _xllamacpp_server(params: Any) -> Any:
    import xllamacpp

    return xllamacpp.Server(params)


class LlamaServer:
    """llama.cpp's HTTP server inside this process (xllamacpp), on 127.0.0.1.

    xllamacpp's constructor loads the model and binds the port; it holds the GIL while loading,
    so the start-up deadline is checked when it returns and while /health is polled, not by
    interrupting the load. `stop()` (also run at exit) releases the model and the port."""

    def __init__(self, model_path: str, *, port: int = 0, threads: int = 1, ctx: int = 4096,
                 start_timeout_s: float = 120.0, factory: Callable[[Any], Any] | None = None) -> None:
        self.model_path = str(model_path)
        self.port = port
        self.threads = threads
        self.ctx = ctx
        self.start_timeout_s = start_timeout_s
        self._factory = factory or _xllamacpp_server
        self._server: Any = None
        self.url: str | None = None  # server root, e.g. http://127.0.0.1:41233
        self.start_s: float | None = None
        self._lock = threading.Lock()

    def start(self) -> str:
        with self._lock:
            if self.url:
                return self.url
            if self.port and not port_free(self.port):
                raise BackendError(
                    f"port {self.port} on {HOST} is in use, so the local LLM server cannot start; set "
                    "SIMAGENT_LLM_PORT to a free port, or 0 to pick one automatically"
                )
            params = self._params()
            began = time.perf_counter()
            try:
                server = self._factory(params)
            except ImportError:
                raise BackendError(
                    "the local backend needs the xllamacpp package (llama.cpp's server): run `make "
                    "setup` or `.venv/bin/pip install -r requirements.lock`"
                ) from None
            except (RuntimeError, OSError, ValueError) as err:
                where = f"port {self.port}" if self.port else "a free port"
                raise BackendError(
                    f"the local LLM server did not start with model {self.model_path} on {HOST} "
                    f"({where}): {err}. Check that the file is a GGUF model and the port is free."
                ) from None
            self._server = server
            atexit.register(self.stop)
            address = str(getattr(server, "listening_address", "") or f"http://{HOST}:{self.port}")
            self.url = address.rstrip("/")
            elapsed = time.perf_counter() - began
            if elapsed > self.start_timeout_s:
                self._stop_locked()
                raise BackendError(self._timeout_message(elapsed))
            wait_ready(self.url, self.start_timeout_s - elapsed, self._timeout_message)
            self.start_s = time.perf_counter() - began
            log.info("local LLM server up at %s in %.1f s (%s)", self.url, self.start_s, self.model_path)
            return self.url

    def _params(self) -> Any:
        import xllamacpp

        params = xllamacpp.CommonParams()
        params.model.path = self.model_path
        params.hostnames = [HOST]
        params.port = self.port
        params.n_ctx = self.ctx
        params.n_parallel = 1  # one slot: decisions are sequential and the system prompt stays cached
        params.cpuparams.n_threads = self.threads
        params.cpuparams_batch.n_threads = self.threads
        # The server drops a request whose client has gone (a timeout) between two batches of the
        # prompt; with the default 2048 a whole MDGym description is one batch, and a request cut
        # short kept a core busy for a minute (close() waited for it). 128: it stops within a second,
        # at the same CPU time per reply (56.9 vs 55.8 CPU-s for one 1.4k-token reading, 1.5B model, measured).
        params.n_batch = params.n_ubatch = PROMPT_BATCH
        params.verbosity = 0  # llama.cpp logs go to the terminal otherwise (and break --json output)
        return params

    def _timeout_message(self, elapsed: float) -> str:
        return (
            f"the local LLM server ({self.model_path}) did not come up within "
            f"{self.start_timeout_s:g} s ({elapsed:.0f} s so far); the machine may be busy. Raise "
            "llm_start_timeout_s or use the rule-based backend (SIMAGENT_BACKEND=expert)."
        )

    def stop(self) -> None:
        with self._lock:
            self._stop_locked()

    def _stop_locked(self) -> None:
        if self._server is not None:
            server, self._server = self._server, None
            del server  # xllamacpp's destructor stops the HTTP loop and frees the model
            gc.collect()
        self.url = None
        try:
            atexit.unregister(self.stop)
        except Exception:  # noqa: BLE001 - best effort at shutdown
            pass


def wait_ready(root: str, timeout_s: float, message: Callable[[float], str] | None = None,
               connect_grace_s: float | None = None) -> None:
    """Poll GET {root}/health until the server answers. llama.cpp answers 503 while it loads the
    model and 200 when ready; other OpenAI-compatible servers may have no /health route (404),
    which still shows a server that is up."""
    began = time.perf_counter()
    deadline = began + max(timeout_s, 0.0)
    grace = None if connect_grace_s is None else began + connect_grace_s
    last = ""
    while True:
        try:
            reply = httpx.get(f"{root}/health", timeout=5.0)
            if reply.status_code != 503:
                return
            last = "HTTP 503 (loading)"
        except httpx.HTTPError as err:
            last = type(err).__name__
            if grace is not None and time.perf_counter() > grace:
                raise BackendError(
                    f"no llama.cpp server answers at {root} ({last}); start it (e.g. `llama-server -m "
                    "MODEL.gguf --port N`) or unset SIMAGENT_LOCAL_URL to let simagent start one"
                ) from None
        now = time.perf_counter()
        if now >= deadline:
            elapsed = now - began
            raise BackendError(message(elapsed) if message else (
                f"the LLM server at {root} was not ready within {timeout_s:g} s (last: {last})"))
        time.sleep(0.1)


# ---------------------------------------------------------------------------------------------
# The backend
# ---------------------------------------------------------------------------------------------


class LocalBackend(OpenAIBackend):
    """OpenAIBackend against a local llama.cpp server (started here or run by the user)."""

    name = "local"

    def __init__(self, settings: Settings, server: LlamaServer | None = None) -> None:
        self.server: LlamaServer | None = None
        self.last_removed: list[str] = []  # what the last reading stated that the request does not (strip_unstated)
        if settings.local_url:
            root, base = _split_url(settings.local_url)
            wait_ready(root, settings.llm_start_timeout_s, connect_grace_s=EXTERNAL_CONNECT_GRACE_S)
            model = settings.model_name
        else:
            if server is None:
                if settings.model_path:
                    path = check_gguf(settings.model_path)
                    model = path.stem
                else:
                    source = model_source(settings.model_name)
                    path = ensure_model(source.name)
                    model = source.name
                server = LlamaServer(str(path), port=settings.llm_port, threads=settings.llm_threads,
                                     ctx=settings.llm_ctx, start_timeout_s=settings.llm_start_timeout_s)
            else:
                model = settings.model_name
            self.server = server
            root, base = _split_url(server.start())
        client_settings = settings.model_copy(update={
            "base_url": base,
            "model": model,
            "api_key": None,
            "llm_timeout_s": max(settings.llm_timeout_s, LOCAL_REQUEST_TIMEOUT_S),
        })
        super().__init__(client_settings)
        self.retries = min(self.retries, LOCAL_RETRIES)

    def __repr__(self) -> str:
        return f"LocalBackend(base_url={self.base_url!r}, model={self.model!r})"

    def _complete(self, decision: str, messages: list[dict[str, str]], name: str,
                  schema: dict[str, Any]) -> tuple[str, str | None]:
        """OpenAIBackend's call; only the configuration hint of its errors is the local one."""
        try:
            return super()._complete(decision, messages, name, schema)
        except BackendError as err:
            raise BackendError(str(err).replace(openai_backend.CONFIG_HINT, LOCAL_HINT)) from None

    def task_spec(self, request: str) -> TaskSpec:
        def parse(content: str) -> TaskSpec:
            data = json.loads(content)
            if not isinstance(data, dict):
                raise ValueError("the answer must be a JSON object")
            spec = reading_to_spec(RequestReading.model_validate(data), request)
            removed = strip_unstated(spec)
            self.last_removed = removed
            if removed:
                log.info("task_reading: dropped %s", "; ".join(removed))
                spec.missing = required_gaps(spec)
                spec.confidence = max(0.0, 1.0 - 0.3 * len(spec.missing))
            problems = validate_spec(spec)
            if problems:
                raise ValueError("; ".join(problems))
            return spec

        return self._decide(READING, TASK_READING, request, RequestReading, parse)

    def close(self) -> None:
        if self.server is not None:
            self.server.stop()
            self.server = None

    def __enter__(self) -> LocalBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def small_model_settings(**overrides: Any) -> Settings:
    """Settings for the small packaged model (tests, quick benchmarks)."""
    return Settings(backend="local", model_name=SMALL_MODEL, **overrides)
