"""The built book: executed, warning-free, complete, Colab-ready and free of CDNs.

`make test` builds the book first (`make book`: execution on, `-n -W --keep-going`) and
keeps the log in book/_build/build.log; these tests read that build. Run directly without a
build, the `html` fixture builds the book once and writes the same log.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlparse

import nbformat
import pytest
import yaml
from PIL import Image

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"
HTML = BOOK / "_build" / "html"
CHAPTERS = BOOK / "chapters"

sys.path.insert(0, str(ROOT / "tools"))
import sync_notebooks  # noqa: E402
from book_toc import toc_files  # noqa: E402

pytestmark = pytest.mark.slow


def chapter_notebooks() -> list[Path]:
    return [BOOK / f"{name}.ipynb" for name in toc_files() if (BOOK / f"{name}.ipynb").exists()]


@pytest.fixture(scope="session")
def html() -> Path:
    if not (HTML / "index.html").exists():
        jupyter_book = Path(sys.executable).parent / "jupyter-book"
        build = subprocess.run([str(jupyter_book), "build", str(BOOK), "-n", "-W", "--keep-going"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        (BOOK / "_build" / "build.log").write_text(build.stdout, encoding="utf-8")
        assert build.returncode == 0, build.stdout[-3000:]
    return HTML


def page(html: Path, name: str) -> str:
    return (html / f"{name}.html").read_text(encoding="utf-8")


def test_every_toc_page_is_in_the_html(html):
    missing = [name for name in toc_files() if not (html / f"{name}.html").exists()]
    assert not missing, f"pages in _toc.yml without HTML: {missing}"


def test_build_log_has_no_warnings(html):
    log = BOOK / "_build" / "build.log"
    assert log.exists(), "book/_build/build.log is written by `make book`; build with it"
    text = log.read_text(encoding="utf-8", errors="replace")
    warnings = [
        line for line in text.splitlines()
        if re.search(r"\bWARNING\b|\bERROR\b", line) and "[IPKernelApp]" not in line
    ]
    assert not warnings, "\n".join(warnings[:20])
    assert "build succeeded" in text


def test_no_cell_printed_an_error(html):
    for name in toc_files():
        text = page(html, name)
        assert 'class="output traceback' not in text and "Traceback (most recent call last)" not in text, name
        assert not re.search(r'class="[^"]*output error', text), name


def _cdn_urls(text: str) -> list[str]:
    urls = []
    for tag, attr in (("script", "src"), ("link", "href")):
        for element in re.findall(rf"<{tag}\b[^>]*>", text):
            match = re.search(rf'{attr}="([^"]+)"', element)
            if match and urlparse(match.group(1)).scheme in ("http", "https", ""):
                if match.group(1).startswith(("http:", "https:", "//")):
                    urls.append(match.group(1))
    for body in re.findall(r"<script\b[^>]*>(.*?)</script>", text, flags=re.S):
        urls += re.findall(r"https?://[^\s\"'<>)]+", body)
    return urls


def test_no_page_loads_scripts_or_styles_from_another_host(html):
    offenders = {}
    for path in sorted(html.rglob("*.html")):
        urls = _cdn_urls(path.read_text(encoding="utf-8"))
        if urls:
            offenders[str(path.relative_to(html))] = urls
    assert not offenders, offenders


def test_maths_is_served_by_the_book(html):
    text = page(html, "chapters/01_layernorm")
    # an incremental build adds Sphinx's cache-busting "?v=<checksum>" once the file exists
    assert re.search(r'src="\.\./_static/mathjax/tex-chtml\.js(\?v=[0-9a-f]+)?"', text)
    assert (html / "_static" / "mathjax" / "tex-chtml.js").stat().st_size > 100_000


def test_no_ipywidgets_or_requirejs_in_the_static_book(html):
    for name in toc_files():
        text = page(html, name)
        assert "application/vnd.jupyter.widget" not in text, name
        assert "require.js" not in text and "html-manager" not in text, name


def test_colab_links_point_to_notebooks_in_the_repository(html):
    config = yaml.safe_load((BOOK / "_config.yml").read_text())
    repo = urlparse(config["repository"]["url"]).path.strip("/")
    branch = config["repository"]["branch"]
    prefix = f"https://colab.research.google.com/github/{repo}/blob/{branch}/"
    checked = 0
    for name in toc_files():
        links = re.findall(r'href="(https://colab\.research\.google\.com/[^"]+)"', page(html, name))
        for link in links:
            assert link.startswith(prefix), link
            target = ROOT / link[len(prefix):]
            assert target.suffix == ".ipynb" and target.exists(), f"{name}: Colab link to missing {target}"
            checked += 1
        if (BOOK / f"{name}.ipynb").exists():
            assert links, f"{name} is a notebook but has no Colab launch button"
    assert checked >= len(chapter_notebooks())


def test_every_notebook_page_offers_its_ipynb_for_download(html):
    for notebook in chapter_notebooks():
        name = notebook.relative_to(BOOK).with_suffix("").as_posix()
        assert f'_sources/{name}.ipynb"' in page(html, name), name
        nbformat.validate(nbformat.read(html / "_sources" / f"{name}.ipynb", as_version=4))


def test_notebooks_are_committed_without_outputs_and_with_the_install_cell():
    source = sync_notebooks.install_source()
    for path in chapter_notebooks():
        notebook = nbformat.read(path, as_version=4)
        for cell in notebook.cells:
            if cell.cell_type == "code":
                assert cell.outputs == [] and cell.execution_count is None, f"{path.name} has outputs"
        first = notebook.cells[0]
        assert first.source == source and "remove-cell" in first.metadata.get("tags", []), path.name


def test_install_cell_installs_from_the_configured_repository_without_pins():
    config = yaml.safe_load((BOOK / "_config.yml").read_text())
    source = sync_notebooks.install_source()
    assert config["repository"]["url"] in source
    assert "jax" not in source and "==" not in source
    compile(source, "install-cell", "exec")


def test_install_cell_does_nothing_where_lnworked_is_installed(tmp_path):
    """Run the real cell here (lnworked is installed): it must not call pip."""
    source = sync_notebooks.install_source().replace("subprocess.check_call", "raise SystemExit('pip called') or ")
    subprocess.run([sys.executable, "-c", source], check=True, cwd=tmp_path)


def test_stress_chapter_asks_colab_for_a_gpu():
    notebook = nbformat.read(CHAPTERS / "05_stress_test.ipynb", as_version=4)
    assert notebook.metadata.get("accelerator") == "GPU"


def test_every_worked_example_appears_on_a_page(html):
    from lnworked.examples import all_examples

    text = "".join(page(html, name) for name in toc_files())
    missing = [e.id for e in all_examples() if f'id="example-{e.id}"' not in text]
    assert not missing, f"worked examples on no page: {missing}"


def test_each_erratum_is_shown_on_its_page_and_on_the_errata_page(html):
    from lnworked.display import errata

    errata_page = page(html, "chapters/08_errata")
    for example in errata():
        assert example.id in errata_page
        owner = [name for name in toc_files() if f'id="example-{example.id}"' in page(html, name)]
        assert owner and "Erratum" in page(html, owner[0]), example.id


#: Pages that are catalogues, not chapters: tables of the stored runs, with nothing to draw.
CATALOGUES = {"chapters/12_appendix_runs"}


def test_every_chapter_has_a_figure_with_alt_text(html):
    for name in toc_files():
        if not (BOOK / f"{name}.ipynb").exists() or name in CATALOGUES:
            continue
        images = re.findall(r"<img\b[^>]*>", page(html, name).split('<main', 1)[-1])
        content = [img for img in images if "logo" not in img]
        assert content, f"{name} has no figure"
        for img in content:
            alt = re.search(r'alt="([^"]*)"', img)
            assert alt and alt.group(1).strip(), f"{name}: image without alt text: {img[:120]}"


def test_figures_have_opaque_backgrounds(html):
    images = sorted((html / "_images").glob("*.png"))
    assert images
    for path in images:
        with Image.open(path) as image:
            if image.mode in ("RGBA", "LA") or "transparency" in image.info:
                alpha = image.convert("RGBA").getchannel("A")
                assert alpha.getextrema()[0] == 255, f"{path.name} has transparent pixels"


def test_glued_numbers_render(html):
    """A glue key that failed to resolve leaves its role text in the page."""
    for name in toc_files():
        assert "{glue:" not in page(html, name), name


MYST_ROLE_TEXT = re.compile(r"\{(?:ref|doc|term|numref|cite(?::[pt])?|eq)\}`")


def test_cross_reference_roles_render(html):
    """A malformed role (a doubled backtick, say) is not parsed and shows as raw MyST text."""
    leaks = {name: MYST_ROLE_TEXT.findall(page(html, name)) for name in toc_files()}
    assert not {name: found for name, found in leaks.items() if found}


RAW_POWER = re.compile(r"[A-Za-z0-9)\]]\^[A-Za-z0-9({\-]")


def _prose_text(markup: str) -> str:
    """A page's article as a reader sees its words: code, typeset maths and scripts removed."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(markup, "html.parser")
    root = soup.find("article") or soup
    for tag in root.find_all(["script", "style", "pre", "code", "math", "svg"]):
        tag.decompose()
    for tag in root.find_all(class_=re.compile(r"^(math|highlight|cell_input)$")):
        tag.decompose()
    text = root.get_text(" ")
    # MathJax typesets \( ... \) and \[ ... \] in the browser: what is inside is not raw
    return re.sub(r"\\\(.*?\\\)|\\\[.*?\\\]|\$\$.*?\$\$", " ", text, flags=re.S)


def test_no_raw_powers_in_the_prose(html):
    """A power written as TeX or caret text (0.02^2, W^Q, f^L) outside maths shows raw to the reader."""
    leaks = {name: RAW_POWER.findall(_prose_text(page(html, name))) for name in toc_files()}
    assert not {name: found for name, found in leaks.items() if found}


def test_raw_power_check_catches_a_caret_outside_maths():
    assert RAW_POWER.search(_prose_text("<article><p>output layer N(0, 0.02^2)</p></article>"))
    assert not RAW_POWER.search(_prose_text(r"<article><p>\(0.02^2\) and <code>x^2</code></p></article>"))
