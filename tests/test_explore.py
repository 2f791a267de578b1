"""Explorers: the static (kernel-free) HTML and the live ipywidgets form."""

from __future__ import annotations

import json
import math
import re
from html.parser import HTMLParser

import numpy as np
import pytest

from lnworked import explore
from lnworked.depth import depth_below, gradient_factor, residual_std, residual_variance
from lnworked.norms import layer_norm

EXPLORERS = {
    "layer-norm": explore.layer_norm_explorer,
    "depth": explore.depth_explorer,
    "residual": explore.residual_explorer,
    "random-stack": explore.random_stack_explorer,
}
#: The largest JSON grid each explorer may carry (compact JSON, bytes): the page must stay fast.
GRID_LIMIT = {"layer-norm": 850_000, "depth": 300_000, "residual": 300_000, "random-stack": 300_000}

#: A readout shows 3 significant digits, so it is within half a unit of its third digit:
#: a relative error of at most 0.5/100.
READOUT_RTOL = 5e-3


@pytest.fixture
def static(monkeypatch):
    monkeypatch.setenv("LNWORKED_STATIC_BUILD", "1")


@pytest.fixture
def live(monkeypatch):
    monkeypatch.delenv("LNWORKED_STATIC_BUILD", raising=False)


class _Dom(HTMLParser):
    """Collects the elements of the static HTML: (tag, attrs, text) and the JSON grid."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.elements, self._open, self.data_json, self.scripts = [], [], None, []

    def handle_starttag(self, tag, attrs):
        element = {"tag": tag, "attrs": dict(attrs), "text": ""}
        self.elements.append(element)
        if tag not in ("input", "br", "meta", "img", "hr"):
            self._open.append(element)

    def handle_endtag(self, tag):
        while self._open:
            element = self._open.pop()
            if element["tag"] == tag:
                break

    def handle_data(self, data):
        for element in self._open:
            element["text"] += data

    def find(self, tag=None, **attrs):
        return [e for e in self.elements if (tag is None or e["tag"] == tag)
                and all(e["attrs"].get(k.replace("_", "-")) == v for k, v in attrs.items())]


def _dom(html_text: str) -> _Dom:
    dom = _Dom()
    dom.feed(html_text)
    return dom


def _grid(dom: _Dom) -> dict:
    (script,) = [e for e in dom.find("script") if e["attrs"].get("class") == "lnw-data"]
    return json.loads(script["text"].replace("<\\/", "</"))


# --- values and formatting -----------------------------------------------------------------


def test_format_readout():
    # three significant digits: 1.3**10 = 13.7858..., 0.65**96 = 1.0957...e-18
    assert explore.format_readout(1.3**10) == "13.8"
    assert explore.format_readout(-0.0) == "0"
    assert explore.format_readout(1e-5) == "1e-05"
    assert explore.format_readout(float("nan")) == "undefined (0/0)"
    assert explore.format_readout(0.65**96) == "1.1e-18"
    assert explore.format_readout(-0.0012345) == "-0.00123"
    # from a thousand to below a million, a whole number: Var = L v = 256 * 4 reads 1024
    assert explore.format_readout(1024.0) == "1024" and explore.format_readout(-123_456.7) == "-123457"
    assert explore.format_readout(1e6) == "1e+06" and explore.format_readout(999.94) == "1000"


def test_format_percent():
    # one decimal of a percentage; a share that rounds to zero from below reads 0.0 %, not -0.0 %
    assert explore.format_percent(0.12634) == "12.6\u00a0%"
    assert explore.format_percent(1.0) == "100.0\u00a0%"
    assert explore.format_percent(-0.0004) == "0.0\u00a0%"
    assert explore.format_percent(-0.25) == "-25.0\u00a0%"


def test_layer_norm_outputs_match_the_library():
    x = np.array([1.0, 3.0, 5.0, 7.0])
    out = explore.layer_norm_outputs(x, 2.0, 1.0, 0.1)
    g, b = np.full(4, 2.0), np.ones(4)
    np.testing.assert_allclose(out["post"], layer_norm(2 * x, g, b, 0.1))
    np.testing.assert_allclose(out["pre"], x + layer_norm(x, g, b, 0.1))
    # seed 004 Ex 2: x + LN(x) with ε = 0
    np.testing.assert_allclose(explore.layer_norm_outputs(x)["pre"], [-0.341641, 2.55279, 5.44721, 8.34164], atol=1e-5)


def test_constant_vector_with_eps_zero_is_undefined_not_nan():
    readouts = explore.layer_norm_readouts((5, 5, 5, 5), eps=0.0)
    assert set(readouts.values()) == {"undefined (0/0)"}
    assert set(explore.layer_norm_readouts((5, 5, 5, 5), eps=1e-5).values()) == {"0", "5"}


def test_depth_readouts():
    r = explore.depth_readouts(0.65, 0.3, 10)
    assert r == {"post": format(0.65**10, ".3g"), "pre": format(1.3**10, ".3g"), "post-depth-below": str(depth_below(0.65, 0.01)),
                 "pre-depth-below": "never"}
    assert explore.depth_readouts(1.0, 0.0, 128)["post-depth-below"] == "never"
    # a negative branch slope makes the toy's Pre-LN factor 1 + F' < 1: it falls like Post-LN's
    neg = explore.depth_readouts(0.65, -0.35, 10)
    assert neg["pre"] == neg["post"] and neg["pre-depth-below"] == neg["post-depth-below"]


# --- the static form ---------------------------------------------------------------------------


@pytest.mark.parametrize("kind", EXPLORERS)
def test_static_html_is_offline_and_follows_the_dom_contract(static, kind):
    from IPython.display import HTML

    obj = EXPLORERS[kind]()
    assert isinstance(obj, HTML)
    text = obj.data
    assert "http://" not in text and "https://" not in text
    assert "require(" not in text and "//cdn" not in text.lower()
    assert "application/vnd.jupyter.widget" not in text
    dom = _dom(text)
    (root,) = dom.find("div", **{"class": "lnw-explorer"})
    assert root["attrs"]["data-explorer"] == kind
    assert re.fullmatch(rf"lnw-{kind}-[0-9a-f]{{12}}", root["attrs"]["id"])
    assert f'window.lnwExplore.init("{root["attrs"]["id"]}")' in text
    assert len(dom.find("svg", **{"class": "lnw-plot"})) == 1
    controls = dom.find("input", type="range") + dom.find("select")
    assert controls and all(c["attrs"].get("name") for c in controls)
    assert dom.find("span", **{"class": "lnw-readout"})
    # controls, plot, readouts, then the caption (as under a figure): on a phone the controls come first
    order = [text.index(mark) for mark in ('class="lnw-controls"', 'class="lnw-plot"', 'class="lnw-readouts"',
                                           'class="lnw-caption"')]
    assert order == sorted(order)
    # the JavaScript is inlined, with no URL or module loader
    script = explore.explorer_script()
    assert len(script) > 2000 and "lnwExplore" in script
    assert script.replace("</", "<\\/") in text
    assert len(json.dumps(_grid(dom), separators=(",", ":"))) < GRID_LIMIT[kind]


def test_two_explorers_have_distinct_ids(static):
    ids = {re.search(r'id="(lnw-depth-[0-9a-f]+)"', explore.depth_explorer().data).group(1) for _ in range(3)}
    assert len(ids) == 3


def test_static_layer_norm_grid_equals_the_library(static):
    dom = _dom(explore.layer_norm_explorer().data)
    grid = _grid(dom)
    axes = grid["axes"]
    assert axes == {"sublayer": ["mlp-0", "mlp-1", "identity"], "eps": ["0", "1e-05", "0.1", "1"],
                    "gamma": ["1", "2"], "beta": ["0", "1"]}
    settings = [((1, 3, 5, 7), 1.0, 0.0, 0.0), ((-2, 0, 2, 4), 2.0, 1.0, 0.0), ((5, 5, 5, 5), 1.0, 0.0, 0.0),
                ((5, 5, 5, 5), 2.0, 1.0, 1e-5), ((1, 3, -2, 7), 2.0, 0.0, 0.1), ((0, 0, 0, 7), 1.0, 1.0, 1.0)]
    for x, g, b, e in settings:
        for f in axes["sublayer"]:
            row = grid["values"][",".join(map(str, x))][axes["sublayer"].index(f)][axes["eps"].index(format(e, "g"))][
                axes["gamma"].index(format(g, "g"))][axes["beta"].index(format(b, "g"))]
            expected = explore.layer_norm_readouts(x, g, b, e, f)
            assert row == [expected[f"post-{i}"] for i in range(1, 5)] + [expected[f"pre-{i}"] for i in range(1, 5)]
        if e > 0 or len(set(x)) > 1:
            xs = np.array(x, float)
            row = grid["values"][",".join(map(str, x))][axes["sublayer"].index("identity")][axes["eps"].index(format(e, "g"))][
                axes["gamma"].index(format(g, "g"))][axes["beta"].index(format(b, "g"))]
            np.testing.assert_allclose([float(v) for v in row[4:]], xs + layer_norm(xs, np.full(4, g), np.full(4, b), e),
                                       rtol=READOUT_RTOL, atol=1e-12)
    # every reachable vector is in the grid: each preset with any one component edited
    for preset in grid["presets"].values():
        for i in range(4):
            for v in range(-2, 8):
                vec = list(preset)
                vec[i] = v
                assert ",".join(map(str, vec)) in grid["values"]
    # the controls' option values are the grid's keys
    for name in ("preset", "component", "eps", "gamma", "beta", "sublayer"):
        assert len(dom.find("select", name=name)) == 1
    options = [e["attrs"]["value"] for e in dom.find("option")]
    assert set(axes["eps"]) <= set(options) and set(grid["presets"]) <= set(options)
    # initial readouts are the library's values of the initial setting (x = (1,3,5,7), γ 1, β 0, ε 0, MLP seed 0)
    shown = {e["attrs"]["data-key"]: e["text"] for e in dom.find("span", **{"class": "lnw-readout"})}
    assert shown == explore.layer_norm_readouts((1, 3, 5, 7), 1.0, 0.0, 0.0, "mlp-0")


def test_layer_norm_explorer_sublayer_is_not_the_identity():
    """Its default sublayer is a real one: Post-LN's row is not LN(x), Pre-LN's is not x + LN(x)."""
    spec = explore.LAYER_NORM
    assert spec.defaults()["sublayer"] != "identity"
    x = np.array([1.0, 3.0, 5.0, 7.0])
    f = explore.ln_sublayer(spec.defaults()["sublayer"])
    # second route: the MLP written out, F(u) = W2 gelu(W1 u) (tanh GELU), no biases
    hidden = x @ f.W1.T
    gelu = 0.5 * hidden * (1 + np.tanh(math.sqrt(2 / math.pi) * (hidden + 0.044715 * hidden**3)))
    fx = gelu @ f.W2.T
    assert np.abs(fx - x).max() > 0.1
    out = explore.layer_norm_outputs(x, sublayer=spec.defaults()["sublayer"])
    z = x + fx
    np.testing.assert_allclose(out["post"], (z - z.mean()) / z.std(), rtol=1e-12)
    assert np.abs(out["post"] - layer_norm(x)).max() > 0.1
    assert np.abs(out["pre"] - (x + layer_norm(x))).max() > 0.1
    # the two seeds give different sublayers; the identity reproduces worked example Ex 2 (LN(2x) = LN(x))
    seeds = [explore.layer_norm_outputs(x, sublayer=name)["post"] for name in ("mlp-0", "mlp-1")]
    assert np.abs(seeds[0] - seeds[1]).max() > 0.1
    np.testing.assert_allclose(explore.layer_norm_outputs(x, sublayer="identity")["post"], layer_norm(x, eps=0.0),
                               rtol=1e-12)
    with pytest.raises(ValueError, match="sublayer"):
        explore.ln_sublayer("mlp-9")


def test_static_depth_grid_equals_the_library(static):
    dom = _dom(explore.depth_explorer().data)
    grid = _grid(dom)
    # slider positions: post_factor 0.5 + 0.01 i, branch -0.5 + 0.01 j (the grid is indexed by them)
    for pct, depth in ((65, 10), (50, 128), (99, 1), (100, 64), (60, 24)):
        assert grid["post"][pct - 50][depth - 1] == explore.format_readout(gradient_factor(pct / 100, depth))
        assert math.isclose(float(grid["post"][pct - 50][depth - 1]), (pct / 100) ** depth, rel_tol=READOUT_RTOL)
    for pct, depth in ((30, 10), (0, 128), (50, 128), (-35, 10), (-50, 128)):
        assert grid["pre"][pct + 50][depth - 1] == explore.format_readout(gradient_factor(1 + pct / 100, depth))
    assert math.isclose(float(grid["pre"][-35 + 50][9]), 0.65**10, rel_tol=READOUT_RTOL)
    assert grid["below"][65 - 50] == str(depth_below(0.65, 0.01))
    assert grid["below"][-1] == "never"
    assert grid["below_pre"][-35 + 50] == str(depth_below(0.65, 0.01)) and grid["below_pre"][50] == "never"
    assert len(grid["post"]) == 51 and len(grid["pre"]) == 101
    (slider,) = dom.find("input", name="depth")
    assert (slider["attrs"]["min"], slider["attrs"]["max"]) == ("1", "128")
    (slider,) = dom.find("input", name="post_factor")
    assert (slider["attrs"]["min"], slider["attrs"]["max"], slider["attrs"]["step"]) == ("0.5", "1", "0.01")
    (slider,) = dom.find("input", name="branch")
    assert float(slider["attrs"]["min"]) < 0, "the slope range includes negative slopes"
    shown = {e["attrs"]["data-key"]: e["text"] for e in dom.find("span", **{"class": "lnw-readout"})}
    assert shown == explore.depth_readouts(0.65, 0.3, 24)


def _stack_ratio_by_autodiff(placement: str, layers: int, seed: int, branch_scale: float) -> float:
    """``||g_0|| / ||g_L||`` of one random stack by a second route: autodiff block Jacobians, then ``J^T g``."""
    from lnworked.blocks import BLOCKS, autodiff_jacobian
    from lnworked.random_stack import stack_sublayers

    x, readout, sublayers = stack_sublayers(placement, layers, seed=seed, branch_scale=branch_scale)
    block = BLOCKS[placement][0]
    jacobians = []
    for f in sublayers:
        jacobians.append(np.asarray(autodiff_jacobian(placement, x, f)))
        x = block(x, f)
    g = np.asarray(readout, float)
    for jacobian in reversed(jacobians):
        g = jacobian.T @ g
    return float(np.linalg.norm(g) / np.linalg.norm(readout))


def test_static_random_stack_grid_equals_the_library(static):
    from lnworked.random_stack import stack_profile, stack_sublayers

    dom = _dom(explore.random_stack_explorer().data)
    grid = _grid(dom)
    assert len(grid["cells"]) == 2 * len(explore.STACK_SCALES) * len(explore.STACK_DEPTHS)
    # a sampled cell against the library's profile and an independent route (autodiff Jacobians)
    for placement, scale, layers, seed in (("post", 2.0, 12, 3), ("pre", 0.5, 6, 7), ("post", 1.0, 48, 0)):
        cell = grid["cells"][f"{placement}|{format(scale, 'g')}|{layers}"]
        shown = cell["readouts"][seed]
        assert shown == explore.random_stack_readouts(placement, layers, seed, scale)
        _, readout, _ = stack_sublayers(placement, layers, seed=seed, branch_scale=scale)
        profile = stack_profile(placement, layers, seed=seed, branch_scale=scale)
        ratio = profile.final_input_grad_norm / np.linalg.norm(readout)
        assert math.isclose(float(shown["input"]), ratio, rel_tol=READOUT_RTOL)
        assert math.isclose(cell["norm"][seed][0], ratio, rel_tol=1e-3) and cell["norm"][seed][-1] == 1
        if layers <= 12:
            assert math.isclose(ratio, _stack_ratio_by_autodiff(placement, layers, seed, scale), rel_tol=1e-9)
        # each truncated stack's gradient: the profile's norm at layer l of a depth-l stack is not what we
        # plot; the plotted curve is the one stack's gradient at every layer, whose gains multiply to it
        gains = np.array(cell["gain"][seed])
        assert gains.shape == (layers,) and math.isclose(float(np.prod(gains)), ratio, rel_tol=1e-3)
        inputs = [stack_profile(placement, layers, seed=s, branch_scale=scale).final_input_grad_norm
                  / np.linalg.norm(stack_sublayers(placement, layers, seed=s, branch_scale=scale)[1])
                  for s in range(explore.STACK_SEEDS)]
        assert math.isclose(float(shown["seeds-min"]), min(inputs), rel_tol=READOUT_RTOL)
        assert math.isclose(float(shown["seeds-max"]), max(inputs), rel_tol=READOUT_RTOL)
        assert set(shown) == {"input", "seeds-min", "seeds-max"}  # no toy rows
    shown = {e["attrs"]["data-key"]: e["text"] for e in dom.find("span", **{"class": "lnw-readout"})}
    assert shown == explore.random_stack_readouts("post", 48, 1, 1.0)  # opens on Post-LN, seed 1
    with pytest.raises(ValueError, match="placement"):
        explore.random_stack_readouts("sideways", 6, 0)


def test_static_residual_grid_equals_the_library(static):
    dom = _dom(explore.residual_explorer().data)
    grid = _grid(dom)
    assert sorted(grid["std"], key=float) == ["0.25", "0.5", "1", "2", "4"]
    for v, n in ((1.0, 24), (1.0, 96), (0.25, 1), (4.0, 256), (2.0, 100)):
        assert grid["std"][format(v, "g")][n - 1] == explore.format_readout(residual_std(n, v))
        assert grid["variance"][format(v, "g")][n - 1] == explore.format_readout(residual_variance(n, v))
    assert grid["std"]["1"][23] == format(math.sqrt(24), ".3g")
    shown = {e["attrs"]["data-key"]: e["text"] for e in dom.find("span", **{"class": "lnw-readout"})}
    assert shown == explore.residual_readouts(24, 1.0)


# --- the live form ---------------------------------------------------------------------------------


def _shown(box) -> dict:
    dom = _dom(box.lnw_readout.value)
    return {e["attrs"]["data-key"]: e["text"] for e in dom.find("span", **{"class": "lnw-readout"})}


@pytest.mark.parametrize("kind", EXPLORERS)
def test_live_returns_a_widget(live, kind):
    import ipywidgets as widgets

    box = EXPLORERS[kind]()
    assert isinstance(box, widgets.Widget)
    assert box.lnw_image.value[:4] == b"\x89PNG"


def _params(box) -> dict:
    dom = _dom(box.lnw_readout.value)
    return {e["attrs"]["data-param"]: e["text"] for e in dom.find("span", **{"class": "lnw-param"})}


def test_live_layer_norm_responds(live):
    box = explore.layer_norm_explorer()
    c = box.lnw_controls
    assert _shown(box) == explore.layer_norm_readouts((1, 3, 5, 7), 1.0, 0.0, 0.0, "mlp-0")
    c["sublayer"].value = "identity"
    assert _shown(box) == explore.layer_norm_readouts((1, 3, 5, 7), 1.0, 0.0, 0.0, "identity")
    png = box.lnw_image.value
    c["preset"].value = "-2,0,2,4"
    c["gamma"].value = 2.0
    c["beta"].value = 1.0
    assert _params(box) == {"x": "(-2, 0, 2, 4)"}
    assert c["value"].value == -2, "a new preset resets the edited component's value"
    assert _shown(box) == explore.layer_norm_readouts((-2, 0, 2, 4), 2.0, 1.0, 0.0, "identity")
    assert _shown(box)["pre-1"] == explore.format_readout(-2 + 2 * (-3 / math.sqrt(5)) + 1)
    assert box.lnw_image.value != png
    bars = {container.patches[0].get_gid(): container for container in box.lnw_figure.axes[0].containers}
    np.testing.assert_allclose([r.get_height() for r in bars["pre"]],
                               explore.layer_norm_outputs((-2, 0, 2, 4), 2.0, 1.0, 0.0, "identity")["pre"])
    c["preset"].value = "5,5,5,5"
    assert set(_shown(box).values()) == {"undefined (0/0)"}
    c["eps"].value = 1e-5
    assert _shown(box) == explore.layer_norm_readouts((5, 5, 5, 5), 2.0, 1.0, 1e-5, "identity")
    c["component"].value = "3"
    assert c["value"].value == 5
    c["value"].value = -2
    assert _params(box) == {"x": "(5, 5, -2, 5)"}
    assert _shown(box) == explore.layer_norm_readouts((5, 5, -2, 5), 2.0, 1.0, 1e-5, "identity")
    c["sublayer"].value = "mlp-1"
    assert _shown(box) == explore.layer_norm_readouts((5, 5, -2, 5), 2.0, 1.0, 1e-5, "mlp-1")


def test_live_depth_responds(live):
    box = explore.depth_explorer()
    c = box.lnw_controls
    assert _shown(box)["pre"] == explore.format_readout(gradient_factor(1.3, 24))
    c["post_factor"].value = 0.8
    c["depth"].value = 12
    assert _shown(box)["post"] == explore.format_readout(gradient_factor(0.8, 12))
    lines = {line.get_gid(): line for line in box.lnw_figure.axes[0].get_lines() if line.get_gid()}
    np.testing.assert_allclose(lines["post"].get_ydata(), 0.8 ** np.arange(1, 129))
    assert box.lnw_figure.axes[0].get_yscale() == "log"
    c["branch"].value = 0.1
    lines = {line.get_gid(): line for line in box.lnw_figure.axes[0].get_lines() if line.get_gid()}
    np.testing.assert_allclose(lines["pre"].get_ydata(), (1 + c["branch"].value) ** np.arange(1, 129))
    assert _shown(box)["pre"] == explore.format_readout(gradient_factor(1 + c["branch"].value, 12))


def test_live_depth_negative_slope_falls(live):
    box = explore.depth_explorer()
    box.lnw_controls["branch"].value = -0.2
    assert float(_shown(box)["pre"]) < 1 and _shown(box)["pre-depth-below"] == str(depth_below(0.8, 0.01))


def test_live_random_stack_responds(live):
    box = explore.random_stack_explorer()
    c = box.lnw_controls
    assert _shown(box) == explore.random_stack_readouts("post", 48, 1, 1.0)
    ax = box.lnw_figure.axes[0]
    assert ax.get_yscale() == "log"
    assert len([l for l in ax.get_lines() if l.get_gid() == "seeds"]) == explore.STACK_SEEDS - 1
    c["placement"].value = "pre"
    assert _shown(box) == explore.random_stack_readouts("pre", 48, 1, 1.0)
    c["seed"].value = 5
    c["depth"].value = 12
    assert _shown(box) == explore.random_stack_readouts("pre", 12, 5, 1.0)
    (line,) = [l for l in box.lnw_figure.axes[0].get_lines() if l.get_gid() == "pre"]
    gains = explore.random_stack_gains("pre", 12, 1.0)[5]
    from lnworked.depth import gradient_norm_profile
    np.testing.assert_allclose(line.get_ydata(), gradient_norm_profile(gains))
    c["view"].value = "gain"
    (line,) = [l for l in box.lnw_figure.axes[0].get_lines() if l.get_gid() == "pre"]
    np.testing.assert_allclose(line.get_ydata(), gains)
    assert box.lnw_figure.axes[0].get_yscale() == "linear"


def test_live_residual_responds(live):
    box = explore.residual_explorer()
    c = box.lnw_controls
    assert _shown(box) == {"variance": "24", "std": format(math.sqrt(24), ".3g")}
    c["n"].value = 96
    c["branch_variance"].value = 4.0
    assert _shown(box) == explore.residual_readouts(96, 4.0)
    (line,) = [l for l in box.lnw_figure.axes[0].get_lines() if l.get_gid() == "std"]
    np.testing.assert_allclose(line.get_ydata(), np.sqrt(4.0 * np.arange(1, 257)))


# --- one spec, two forms ------------------------------------------------------------------------------


def _static_controls(dom: _Dom) -> dict:
    """name -> what the static HTML offers: a range's bounds, step and value, or a select's options."""
    out = {}
    labels = [e for e in dom.find("label")]
    for element in dom.elements:
        a = element["attrs"]
        if element["tag"] == "input" and a.get("type") == "range":
            out[a["name"]] = ("range", a["aria-label"], a["min"], a["max"], a["step"], a["value"])
        elif element["tag"] == "select":
            i = dom.elements.index(element)
            options = []
            for option in dom.elements[i + 1:]:
                if option["tag"] != "option":
                    break
                options.append((option["attrs"]["value"], option["text"]))
            selected = [o["attrs"]["value"] for o in dom.elements[i + 1:i + 1 + len(options)] if "selected" in o["attrs"]]
            (label,) = [lab["text"] for lab in labels if lab["text"].endswith("".join(t for _, t in options))]
            out[a["name"]] = ("select", label[: -len("".join(t for _, t in options))].strip(), options, selected[0])
    return out


def _live_controls(box) -> dict:
    """The same description read off the live widgets."""
    import ipywidgets as widgets

    out = {}
    for name, w in box.lnw_controls.items():
        if isinstance(w, widgets.Dropdown):
            options = [(explore._key(value), text) for text, value in w.options]
            out[name] = ("select", w.description, options, explore._key(w.value))
        else:
            out[name] = ("range", w.description, *(explore._key(v) for v in (w.min, w.max, w.step, w.value)))
    return out


@pytest.mark.parametrize("kind", EXPLORERS)
def test_static_and_live_forms_have_the_same_controls(monkeypatch, kind):
    monkeypatch.setenv("LNWORKED_STATIC_BUILD", "1")
    static_controls = _static_controls(_dom(EXPLORERS[kind]().data))
    monkeypatch.delenv("LNWORKED_STATIC_BUILD")
    box = EXPLORERS[kind]()
    assert _live_controls(box) == static_controls
    assert list(static_controls) == [c.name for c in explore.EXPLORERS[kind].controls]


@pytest.mark.parametrize("kind", EXPLORERS)
def test_static_and_live_forms_draw_in_the_same_house_colours(monkeypatch, kind):
    from matplotlib.colors import to_hex

    from lnworked.style import PALETTE

    monkeypatch.setenv("LNWORKED_STATIC_BUILD", "1")
    static = {key: s["color"] for key, s in _grid(_dom(EXPLORERS[kind]().data))["series"].items()}
    monkeypatch.delenv("LNWORKED_STATIC_BUILD")
    ax = EXPLORERS[kind]().lnw_figure.axes[0]
    live = {}
    for artist in [*ax.lines, *ax.patches]:
        if artist.get_gid():
            color = artist.get_color() if hasattr(artist, "get_xdata") else artist.get_facecolor()
            live.setdefault(artist.get_gid(), set()).add(to_hex(color))
    single = {key: colors.pop() for key, colors in live.items() if len(colors) == 1}
    if kind == "random-stack":  # one placement is drawn at a time
        assert single.items() <= static.items() and len(single) == 2
    else:
        assert single == static
    assert set(static.values()) <= set(PALETTE.values())


def _static_lookup(kind: str, dom: _Dom, values: dict) -> dict:
    """The readouts the grid holds for a setting, following the documented grid layout."""
    grid = _grid(dom)

    def position(name):
        a = dom.find("input", name=name)[0]["attrs"]
        return round((float(values[name]) - float(a["min"])) / float(a["step"]))

    if kind == "layer-norm":
        vector = list(grid["presets"][values["preset"]])
        vector[int(values["component"]) - 1] = values["value"]
        axes = grid["axes"]
        row = grid["values"][",".join(map(str, vector))][axes["sublayer"].index(values["sublayer"])][
            axes["eps"].index(explore._key(values["eps"]))][
            axes["gamma"].index(explore._key(values["gamma"]))][axes["beta"].index(explore._key(values["beta"]))]
        d = len(row) // 2
        return {**{f"post-{i + 1}": row[i] for i in range(d)}, **{f"pre-{i + 1}": row[d + i] for i in range(d)}}
    if kind == "depth":
        p, depth = position("post_factor"), position("depth")
        return {"post": grid["post"][p][depth], "pre": grid["pre"][position("branch")][depth],
                "post-depth-below": grid["below"][p], "pre-depth-below": grid["below_pre"][position("branch")]}
    if kind == "random-stack":
        cell = grid["cells"][f"{values['placement']}|{explore._key(values['branch_scale'])}|{values['depth']}"]
        return cell["readouts"][position("seed")]
    v, n = explore._key(values["branch_variance"]), position("n")
    return {"variance": grid["variance"][v][n], "std": grid["std"][v][n]}


SETTINGS = {
    "layer-norm": [{"preset": "2,2,6,6", "component": "2", "value": 7, "gamma": 2.0, "beta": 1.0, "eps": 0.1,
                    "sublayer": "mlp-1"},
                   {"preset": "0,0,0,0", "component": "4", "value": 0, "gamma": 1.0, "beta": 0.0, "eps": 0.0,
                    "sublayer": "identity"},
                   {"preset": "-2,0,2,4", "component": "1", "value": 3, "gamma": 2.0, "beta": 0.0, "eps": 1e-5,
                    "sublayer": "mlp-0"}],
    "depth": [{"post_factor": 0.8, "branch": 0.1, "depth": 96}, {"post_factor": 1.0, "branch": 0.0, "depth": 1},
              {"post_factor": 0.57, "branch": 0.43, "depth": 33}, {"post_factor": 0.9, "branch": -0.42, "depth": 20}],
    "random-stack": [{"placement": "pre", "seed": 3, "depth": 24, "branch_scale": 2.0, "view": "gain"},
                     {"placement": "post", "seed": 7, "depth": 96, "branch_scale": 0.5, "view": "norm"}],
    "residual": [{"n": 100, "branch_variance": 4.0}, {"n": 1, "branch_variance": 0.25},
                 {"n": 256, "branch_variance": 0.5}],
}


@pytest.mark.parametrize("kind", EXPLORERS)
def test_live_value_function_equals_the_static_grid(monkeypatch, kind):
    monkeypatch.setenv("LNWORKED_STATIC_BUILD", "1")
    dom = _dom(EXPLORERS[kind]().data)
    monkeypatch.delenv("LNWORKED_STATIC_BUILD")
    box = EXPLORERS[kind]()
    spec = explore.EXPLORERS[kind]
    for values in SETTINGS[kind]:
        for name, value in values.items():  # in spec order: a preset resets the value slider first
            box.lnw_controls[name].value = value
        assert _shown(box) == _static_lookup(kind, dom, values) == spec.readouts(values), values


def test_live_sliders_snap_to_the_static_settings(live):
    box = explore.depth_explorer()
    box.lnw_controls["post_factor"].value = 0.65 + 1e-9
    assert _shown(box) == explore.depth_readouts(0.65, 0.3, 24)


# --- the static JavaScript, run in Node.js against a minimal DOM -------------------------------

_NODE_DOM = r"""
const tree = JSON.parse(require('fs').readFileSync(0, 'utf8'));
function El(tag, attrs) {
  this.tagName = tag; this.attrs = Object.assign({}, attrs || {}); this.children = []; this.parent = null;
  this._text = ''; this.listeners = {}; this.namespaceURI = tag === 'svg' ? 'svg-ns' : 'html-ns';
  if (tag === 'input') this.value = this.attrs.value || '';
}
El.prototype.getAttribute = function (k) { return k in this.attrs ? this.attrs[k] : null; };
El.prototype.setAttribute = function (k, v) { this.attrs[k] = String(v); };
El.prototype.appendChild = function (c) { c.parent = this; this.children.push(c); return c; };
El.prototype.removeChild = function (c) { this.children.splice(this.children.indexOf(c), 1); return c; };
Object.defineProperty(El.prototype, 'firstChild', { get() { return this.children[0] || null; } });
Object.defineProperty(El.prototype, 'textContent', {
  get() { return this._text + this.children.map(c => c.textContent).join(''); },
  set(v) { this.children = []; this._text = String(v); } });
El.prototype.addEventListener = function (t, f) { (this.listeners[t] = this.listeners[t] || []).push(f); };
El.prototype.fire = function (t) { (this.listeners[t] || []).forEach(f => f({ type: t, target: this })); };
function matches(el, sel) {
  const m = sel.trim().match(/^([a-z]*)(?:\.([\w-]+))?(?:\[([\w-]+)="([^"]*)"\])?$/);
  if (!m) throw new Error('selector ' + sel);
  if (m[1] && el.tagName !== m[1]) return false;
  if (m[2] && !(el.attrs['class'] || '').split(/\s+/).includes(m[2])) return false;
  if (m[3] && el.attrs[m[3]] !== m[4]) return false;
  return true;
}
El.prototype.querySelectorAll = function (sel) {
  const out = [], parts = sel.split(',');
  (function walk(e) { e.children.forEach(c => { if (parts.some(p => matches(c, p))) out.push(c); walk(c); }); })(this);
  return out;
};
El.prototype.querySelector = function (sel) { return this.querySelectorAll(sel)[0] || null; };
function build(n) {
  const e = new El(n.tag, n.attrs); e._text = n.text || '';
  (n.children || []).forEach(c => e.appendChild(build(c)));
  if (n.tag === 'select') {
    const opts = e.children.filter(c => c.tagName === 'option');
    const sel = opts.find(o => 'selected' in o.attrs) || opts[0];
    e.value = sel.attrs.value;
  }
  return e;
}
const body = build(tree.body);
global.window = {};
global.document = {
  getElementById: id => body.querySelectorAll('div').find(d => d.attrs.id === id) || null,
  createElementNS: (ns, tag) => new El(tag),
};
const results = [];
function snapshot(root) {
  const r = {};
  root.querySelectorAll('span.lnw-readout').forEach(s => { r[s.attrs['data-key']] = s.textContent; });
  const svg = root.querySelector('svg.lnw-plot');
  const count = sel => svg.querySelectorAll(sel).length;
  return { readouts: r, lines: count('path.lnw-line'), bars: count('rect.lnw-bar'), markers: count('line.lnw-marker'),
           points: count('circle.lnw-point'),
           ready: root.attrs['data-lnw-ready'] || null,
           texts: svg.querySelectorAll('text').map(t => t.textContent),
           subscripts: svg.querySelectorAll('tspan').filter(t => 'dy' in t.attrs && parseFloat(t.attrs.dy) > 0)
             .map(t => t.textContent),
           params: Object.fromEntries(root.querySelectorAll('span.lnw-param').map(s => [s.attrs['data-param'], s.textContent])) };
}
tree.scripts.forEach(code => { eval(code); });
const roots = body.querySelectorAll('div.lnw-explorer');
roots.forEach(r => results.push({ id: r.attrs.id, kind: r.attrs['data-explorer'], initial: snapshot(r) }));
tree.actions.forEach(a => {
  const root = roots[a.root];
  const c = root.querySelector('[name="' + a.name + '"]');
  c.value = a.value; c.fire(a.event || 'input');
  results.push({ after: a, state: snapshot(root) });
});
console.log(JSON.stringify(results));
"""


class _Tree(HTMLParser):
    """HTML -> nested dicts for the Node.js shim; inline scripts kept apart."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.body = {"tag": "body", "attrs": {}, "children": [], "text": ""}
        self.stack, self.scripts = [self.body], []

    def handle_starttag(self, tag, attrs):
        node = {"tag": tag, "attrs": {k: (v if v is not None else "") for k, v in attrs}, "children": [], "text": ""}
        self.stack[-1]["children"].append(node)
        if tag not in ("input", "br", "img"):
            self.stack.append(node)

    def handle_endtag(self, tag):
        while len(self.stack) > 1:
            if self.stack.pop()["tag"] == tag:
                break

    def handle_data(self, data):
        node = self.stack[-1]
        if node["tag"] == "script" and node["attrs"].get("type") != "application/json":
            self.scripts.append(data)
        else:
            node["text"] += data


def _run_in_node(html_text: str, actions: list) -> list:
    import shutil
    import subprocess

    node = shutil.which("node")
    if node is None:
        pytest.skip("Node.js is not installed")
    tree = _Tree()
    tree.feed(html_text)
    payload = json.dumps({"body": tree.body, "scripts": tree.scripts, "actions": actions})
    done = subprocess.run([node, "-e", _NODE_DOM], input=payload, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_static_javascript_updates_readouts_and_plots(static):
    page = explore.layer_norm_explorer().data + explore.depth_explorer().data + explore.residual_explorer().data
    actions = [
        {"root": 0, "name": "preset", "value": "5,5,5,5", "event": "change"},
        {"root": 0, "name": "eps", "value": "1e-05", "event": "change"},
        {"root": 0, "name": "component", "value": "3", "event": "change"},
        {"root": 0, "name": "value", "value": "-2"},
        {"root": 0, "name": "gamma", "value": "2", "event": "change"},
        {"root": 1, "name": "post_factor", "value": "0.8"},
        {"root": 1, "name": "depth", "value": "12"},
        {"root": 2, "name": "n", "value": "96"},
        {"root": 2, "name": "branch_variance", "value": "4", "event": "change"},
    ]
    results = _run_in_node(page, actions)
    ln, depth, residual = results[0]["initial"], results[1]["initial"], results[2]["initial"]
    assert [r["kind"] for r in results[:3]] == ["layer-norm", "depth", "residual"]
    assert ln["ready"] == depth["ready"] == residual["ready"] == "1"
    assert ln["readouts"] == explore.layer_norm_readouts((1, 3, 5, 7), 1.0, 0.0, 0.0, "mlp-0") and ln["bars"] == 12
    assert depth["readouts"] == explore.depth_readouts(0.65, 0.3, 24) and depth["lines"] == 2 and depth["markers"] == 1
    assert residual["readouts"] == explore.residual_readouts(24, 1.0) and residual["lines"] == 1
    steps = [r["state"] for r in results[3:]]
    assert steps[0]["readouts"] == explore.layer_norm_readouts((5, 5, 5, 5), 1.0, 0.0, 0.0, "mlp-0")
    assert {steps[0]["readouts"][f"pre-{i}"] for i in range(1, 5)} == {"undefined (0/0)"}  # LN(5,5,5,5), ε = 0
    assert steps[0]["bars"] == 8                          # the input's and Post-LN's: x + F(x) is not constant
    assert steps[1]["readouts"] == explore.layer_norm_readouts((5, 5, 5, 5), 1.0, 0.0, 1e-5, "mlp-0")
    assert steps[2]["params"]["value"] == "5"                             # component 3 of the preset
    assert steps[3]["params"]["x"] == "(5, 5, -2, 5)"
    assert steps[3]["readouts"] == explore.layer_norm_readouts((5, 5, -2, 5), 1.0, 0.0, 1e-5, "mlp-0")
    assert steps[4]["readouts"] == explore.layer_norm_readouts((5, 5, -2, 5), 2.0, 0.0, 1e-5, "mlp-0")
    assert steps[5]["readouts"] == explore.depth_readouts(0.8, 0.3, 24)
    assert steps[6]["readouts"] == explore.depth_readouts(0.8, 0.3, 12)
    assert steps[6]["params"]["post_factor"] == "0.8" and steps[6]["params"]["depth"] == "12"
    assert steps[3]["params"]["value"] == "-2"
    assert steps[7]["readouts"] == explore.residual_readouts(96, 1.0)
    assert steps[8]["readouts"] == explore.residual_readouts(96, 4.0)


def test_static_javascript_random_stack_and_negative_slopes(static):
    page = explore.random_stack_explorer().data + explore.depth_explorer().data
    actions = [
        {"root": 0, "name": "seed", "value": "5"},
        {"root": 0, "name": "placement", "value": "post", "event": "change"},
        {"root": 0, "name": "placement", "value": "pre", "event": "change"},
        {"root": 0, "name": "depth", "value": "12", "event": "change"},
        {"root": 0, "name": "branch_scale", "value": "3", "event": "change"},
        {"root": 0, "name": "view", "value": "gain", "event": "change"},
        {"root": 1, "name": "branch", "value": "-0.3"},
    ]
    results = _run_in_node(page, actions)
    stack = results[0]["initial"]
    assert stack["ready"] == "1" and stack["readouts"] == explore.random_stack_readouts("post", 48, 1, 1.0)
    assert stack["lines"] == explore.STACK_SEEDS
    opened = [r["state"] for r in results[2:]]
    assert opened[0]["readouts"] == explore.random_stack_readouts("post", 48, 5, 1.0)
    assert opened[0]["params"]["seed"] == "5"
    assert opened[1]["readouts"] == explore.random_stack_readouts("post", 48, 5, 1.0)
    steps = opened[1:]  # from here as before: Post-LN at seed 5, then Pre-LN
    assert steps[1]["readouts"] == explore.random_stack_readouts("pre", 48, 5, 1.0)
    assert steps[2]["readouts"] == explore.random_stack_readouts("pre", 12, 5, 1.0)
    assert steps[3]["readouts"] == explore.random_stack_readouts("pre", 12, 5, 3.0)
    assert steps[4]["readouts"] == steps[3]["readouts"] and steps[4]["lines"] == explore.STACK_SEEDS
    # the y label: ‖g_ℓ‖ / ‖g_L‖ drawn with SVG subscripts, no literal underscore
    label = next(t for t in stack["texts"] if t.startswith("‖g"))
    assert label == "‖gℓ‖ / ‖gL‖ (log scale)" and stack["subscripts"] == ["ℓ", "L"]
    assert not any("_" in t for t in stack["texts"] + steps[4]["texts"])
    assert "gain of block ℓ" in steps[4]["texts"]
    assert steps[5]["readouts"] == explore.depth_readouts(0.65, -0.3, 24)
    assert float(steps[5]["readouts"]["pre"]) < 1


def test_random_stack_labels_have_no_literal_underscores(static):
    """The explorer's caption and readout headers, and the figure's axis labels: subscripts, not "g_"."""
    import matplotlib

    page = explore.random_stack_explorer().data
    text = re.sub(r'<script type="application/json".*?</script>', "", page, flags=re.S)
    text = re.sub(r"<script>.*?</script>", "", text, flags=re.S)
    assert "g_" not in text and "‖g<sub>0</sub>‖ / ‖g<sub>L</sub>‖" in text
    fig = explore.random_stack_figure(layers=6)
    for ax in fig.axes:
        label = ax.get_ylabel()
        assert label.startswith("$") and label.endswith("$")  # mathtext: g_\ell is typeset as a subscript
        # the label parses as mathtext (a bad one raises here)
        matplotlib.mathtext.MathTextParser("path").parse(label)
        assert "_" not in ax.get_xlabel()
