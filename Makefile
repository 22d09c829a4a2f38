# sdnbench: `make demo` installs what is missing, runs the quickstart
# experiment and writes its HTML report; `make test` runs every test. Both are idempotent.

SHELL := /bin/bash
export PATH := $(HOME)/.cargo/bin:$(PATH)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test setup system venv controllers build schema unit clean-runs

demo: setup
	@out=runs/$$(date +%Y%m%d-%H%M%S)-quickstart; \
	$(VENV)/bin/sdnbench run examples/quickstart.yaml --out $$out && \
	$(VENV)/bin/sdnbench report $$out

test: setup
	@if ls crates/*/Cargo.toml >/dev/null 2>&1; then cargo test --release --workspace -q; fi
	$(PY) -m pytest -q -ra tests

unit: venv
	$(PY) -m pytest -q -m "not netns" tests

setup: system venv controllers build

system:
	@scripts/setup-system.sh

# Debian's python3 with system site-packages: Mininet is a Debian package.
venv: $(STAMP)
$(STAMP): pyproject.toml
	@test -x $(PY) || /usr/bin/python3 -m venv --system-site-packages $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -e '.[test]'
	@touch $(STAMP)

controllers:
	@scripts/install-controllers.sh all

build:
	@if ls crates/*/Cargo.toml >/dev/null 2>&1; then cargo build --release --workspace -q; fi

schema: venv
	$(PY) -m sdnbench schema > schemas/experiment.schema.json
	$(PY) -m sdnbench schema --markdown > docs/experiment-format.md

clean-runs:
	rm -rf runs
