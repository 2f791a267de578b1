"""LayerNorm as geometry: centring is a projection, normalising puts the vector on the sphere of
radius sqrt(d); the figure of chapter 1 plots exactly that; the Jacobian's null directions."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.colors import to_rgba

from lnworked import figures
from lnworked.examples import get_example
from lnworked.norms import (
    DegenerateInputError,
    layer_norm,
    layer_norm_geometry,
    layer_norm_jacobian,
    mean_free_basis,
)

RNG = np.random.default_rng(12345)
VECTORS = [RNG.normal(0.0, scale, d) + shift for d, scale, shift in [(2, 1.0, 0.0), (3, 0.1, 5.0), (4, 7.0, -3.0),
                                                                      (16, 1.0, 100.0), (64, 0.5, 0.0)]]


@pytest.mark.parametrize("d", [2, 3, 4, 17])
def test_mean_free_basis_is_orthonormal_and_spans_the_hyperplane(d):
    basis = mean_free_basis(d)
    assert basis.shape == (d - 1, d)
    np.testing.assert_allclose(basis @ basis.T, np.eye(d - 1), atol=1e-12)
    np.testing.assert_allclose(basis @ np.ones(d), 0.0, atol=1e-12)
    np.testing.assert_allclose(basis.T @ basis, np.eye(d) - np.ones((d, d)) / d, atol=1e-12)


def test_mean_free_basis_rejects_d_below_two():
    with pytest.raises(ValueError, match="d"):
        mean_free_basis(1)


@pytest.mark.parametrize("x", VECTORS, ids=lambda v: f"d{v.size}")
def test_centring_is_the_orthogonal_projection_onto_the_hyperplane(x):
    g = layer_norm_geometry(x, eps=0)
    d = x.size
    np.testing.assert_allclose(g.along_ones + g.centred, x, rtol=0, atol=1e-12 * (1 + np.abs(x).max()))
    np.testing.assert_allclose(np.sum(g.centred), 0.0, atol=1e-9 * (1 + np.abs(x).max()) * d)
    np.testing.assert_allclose(np.ptp(g.along_ones), 0.0, atol=1e-12)  # a multiple of 1
    projector = np.eye(d) - np.ones((d, d)) / d
    np.testing.assert_allclose(g.centred, projector @ x, atol=1e-9 * (1 + np.abs(x).max()))
    assert g.sigma == pytest.approx(np.std(x), rel=1e-10)


@pytest.mark.parametrize("x", VECTORS, ids=lambda v: f"d{v.size}")
def test_without_eps_every_output_is_on_the_sphere_of_radius_sqrt_d(x):
    g = layer_norm_geometry(x, eps=0)
    assert np.linalg.norm(g.output) == pytest.approx(np.sqrt(x.size), rel=1e-10)
    assert g.radius == pytest.approx(np.sqrt(x.size), rel=1e-10)
    np.testing.assert_allclose(g.output, layer_norm(x, eps=0), atol=1e-12)
    # Same direction as the centred vector: a pure rescaling.
    cosine = g.output @ g.centred / (np.linalg.norm(g.output) * np.linalg.norm(g.centred))
    assert cosine == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("x", VECTORS, ids=lambda v: f"d{v.size}")
def test_with_eps_the_output_falls_inside_the_sphere(x):
    eps = 1e-2
    g = layer_norm_geometry(x, eps=eps)
    assert g.radius < np.sqrt(x.size)
    assert np.linalg.norm(g.output) == pytest.approx(g.radius, rel=1e-10)
    np.testing.assert_allclose(g.output, layer_norm(x, eps=eps), atol=1e-12)
    smaller = layer_norm_geometry(x / 100, eps=eps)  # nearer sqrt(eps): further inside
    assert smaller.radius < g.radius


@pytest.mark.parametrize("x", VECTORS, ids=lambda v: f"d{v.size}")
def test_shift_along_ones_and_positive_scaling_leave_the_output_unchanged(x):
    base = layer_norm_geometry(x, eps=0)
    for c in (-7.5, 0.3, 40.0):
        shifted = layer_norm_geometry(x + c, eps=0)
        np.testing.assert_allclose(shifted.centred, base.centred, atol=1e-9 * (1 + abs(c) + np.abs(x).max()))
        np.testing.assert_allclose(shifted.output, base.output, atol=1e-8)
    for c in (1e-3, 0.5, 250.0):
        scaled = layer_norm_geometry(c * x, eps=0)
        np.testing.assert_allclose(scaled.output, base.output, atol=1e-8)
        assert scaled.sigma == pytest.approx(c * base.sigma, rel=1e-9)
    np.testing.assert_allclose(layer_norm_geometry(-x, eps=0).output, -base.output, atol=1e-8)  # c < 0 flips


def test_flat_vector_is_degenerate_without_eps_and_zero_with_eps():
    with pytest.raises(DegenerateInputError):
        layer_norm_geometry([0.1, 0.1, 0.1], eps=0)
    g = layer_norm_geometry([0.1, 0.1, 0.1], eps=1e-5)
    np.testing.assert_array_equal(g.centred, 0.0)
    np.testing.assert_array_equal(g.output, 0.0)
    assert g.radius == 0.0


def test_geometry_rejects_batches_and_bad_input():
    with pytest.raises(ValueError, match="x"):
        layer_norm_geometry(np.ones((2, 3)))
    with pytest.raises(ValueError, match="x"):
        layer_norm_geometry([1.0, np.nan])


@pytest.mark.parametrize("x", VECTORS, ids=lambda v: f"d{v.size}")
def test_jacobian_null_directions_are_ones_and_the_radial_direction(x):
    """J_N 1 = 0; J_N x_hat = eps / (sigma^2 + eps) / s * x_hat (-> 0 as eps -> 0); the other
    d - 2 eigenvalues are 1 / sqrt(sigma^2 + eps)."""
    eps = 1e-5
    d = x.size
    jacobian = layer_norm_jacobian(x, eps=eps)
    np.testing.assert_allclose(jacobian @ np.ones(d), 0.0, atol=1e-10 / min(1.0, np.std(x)))
    x_hat = layer_norm(x, eps=eps)
    s = np.sqrt(np.var(x) + eps)
    radial = jacobian @ x_hat
    np.testing.assert_allclose(radial, eps / (np.var(x) + eps) / s * x_hat, rtol=1e-6, atol=1e-12)
    eigenvalues = np.linalg.eigvalsh(jacobian)
    expected = np.sort([0.0, eps / (np.var(x) + eps) / s] + [1.0 / s] * (d - 2))
    np.testing.assert_allclose(eigenvalues, expected, rtol=1e-6, atol=1e-9 / s)
    if np.var(x) > 1e3 * eps:  # then the radial eigenvalue is "about 0" next to the others
        assert np.sort(np.abs(eigenvalues))[1] < 1e-2 / s
    if d == 2:  # a 2-vector can only map to +-(1, -1): the Jacobian is zero to within eps
        assert np.max(np.abs(jacobian)) < 1e-4


def test_figure_plots_the_library_geometry():
    fig = figures.layer_norm_geometry()
    plane, face = fig.axes[:2]
    assert to_rgba(fig.get_facecolor())[3] == 1.0
    assert plane.get_title() and face.get_title()
    # d = 2: source text 000's x, and every shifted copy, centre onto the same point; the output
    # is on the mean-free line at distance sqrt(2).
    x = np.asarray(get_example("000-pre-ln-gradient").value("x"), dtype=float)
    [output] = [line for line in plane.lines if line.get_gid() == "output"]
    out = np.array([output.get_xdata()[0], output.get_ydata()[0]])
    np.testing.assert_allclose(out, layer_norm(x, eps=0), atol=1e-12)
    assert np.linalg.norm(out) == pytest.approx(np.sqrt(2.0))
    ends = {(round(line.get_xdata()[-1], 9), round(line.get_ydata()[-1], 9))
            for line in plane.lines if line.get_gid() == "projection"}
    assert len(ends) == 1  # every projection ends at the same centred point
    starts = [np.array([line.get_xdata()[0], line.get_ydata()[0]]) for line in plane.lines
              if line.get_gid() == "projection"]
    assert len(starts) >= 2
    for start in starts:  # each projection runs along 1
        step = np.array(next(iter(ends))) - start
        assert abs(step[0] - step[1]) < 1e-9
    # d = 3: every output sits on the circle of radius sqrt(3), inside the plane's coordinates.
    outputs = [np.array([line.get_xdata()[0], line.get_ydata()[0]]) for line in face.lines
               if line.get_gid() == "output"]
    assert len(outputs) >= 5
    for point in outputs:
        assert np.linalg.norm(point) == pytest.approx(np.sqrt(3.0), rel=1e-9)
    [circle] = [line for line in face.lines if line.get_gid() == "sphere"]
    radii = np.hypot(circle.get_xdata(), circle.get_ydata())
    np.testing.assert_allclose(radii, np.sqrt(3.0), rtol=1e-9)


def test_figure_scaled_family_lands_on_one_point():
    scales = (0.25, 0.5, 1.0, 3.0)
    fig = figures.layer_norm_geometry(scales=scales, samples=0)
    face = fig.axes[1]
    outputs = [np.array([line.get_xdata()[0], line.get_ydata()[0]]) for line in face.lines
               if line.get_gid() == "output"]
    centred = [np.array([line.get_xdata()[0], line.get_ydata()[0]]) for line in face.lines
               if line.get_gid() == "centred"]
    assert len(outputs) == len(centred) == len(scales)
    for point in outputs[1:]:
        np.testing.assert_allclose(point, outputs[0], atol=1e-12)
    lengths = [np.linalg.norm(c) for c in centred]
    assert lengths == sorted(lengths) and lengths[0] < lengths[-1]  # the inputs differ, the output does not
