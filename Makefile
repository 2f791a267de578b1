# The two entry points the README names: `make book` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
HTML   := book/_build/html/index.html

SHELL  := /bin/bash
.SHELLFLAGS := -o pipefail -c

.PHONY: book book-no-solutions pdf test setup clean

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

# The book without exercise solutions (to publish for students):
# HTML in book/_build/no_solutions/_build/html
NOSOL_CONFIG := book/_build/_config_no_solutions.yml
book-no-solutions: $(STAMP)
	mkdir -p book/_build
	$(PY) tools/bookconfig.py book/_config.yml $(NOSOL_CONFIG)
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VENV)/bin/jupyter-book build book --config $(NOSOL_CONFIG) --path-output book/_build/no_solutions -n -W --keep-going
	@echo "The book without solutions is at $(CURDIR)/book/_build/no_solutions/_build/html/index.html"

# The whole book as one PDF, printed offline by Debian's Chromium (tools/book_pdf.py):
# book/_build/pdf/lnworked.pdf (solutions at each chapter's end) and lnworked-no-solutions.pdf
pdf: book
	$(PY) tools/book_pdf.py --html book/_build/html --out book/_build/pdf

test: book
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(PY) -m pytest -n 2 -q -rs

clean:
	rm -rf book/_build
