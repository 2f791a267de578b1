# The two entry points the README names: `make book` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
HTML   := book/_build/html/index.html

SHELL  := /bin/bash
.SHELLFLAGS := -o pipefail -c

.PHONY: book test setup clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[book,dev]"
	$(PY) -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $(STAMP)

# Executes every chapter; warnings and cell errors fail the build.
book: $(STAMP)
	mkdir -p book/_build
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VENV)/bin/jupyter-book build book -n -W --keep-going 2>&1 | tee book/_build/build.log
	@echo "The book is at $(CURDIR)/$(HTML)"

test: book
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(PY) -m pytest -n 2 -q

clean:
	rm -rf book/_build
