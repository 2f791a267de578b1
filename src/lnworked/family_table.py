"""The family side by side: one row per placement at one depth of the random toy stack.

:func:`family_table` measures the rows (:func:`lnworked.random_stack.stack_profile` of each
placement, with its formula and source from :mod:`lnworked.placements`);
:func:`format_family_table` writes them as an HTML or Markdown table;
:func:`relative_input_gradients` gives the table's gradient column for several seeds.
Every gradient is relative to the readout that sent it, ``|| d(w . y_L) / d x_0 || / ||w||``.
"""

from __future__ import annotations

import html
import numbers

import numpy as np
from tabulate import tabulate

from lnworked.placements import VARIANTS, variant_spec
from lnworked.random_stack import stack_profile
from lnworked.validation import check_int

__all__ = ["family_table", "format_family_table", "relative_input_gradients"]


def family_table(layers: int = 48, width: int = 16, seed: int = 0, branch_scale: float = 1.0, variants=None) -> list[dict]:
    """One row per variant at depth ``layers``: its formula, source and measured numbers.

    ``variants`` names entries of :data:`~lnworked.placements.VARIANTS` (the default: all of
    them) or :data:`~lnworked.placements.MODERN_VARIANTS`.

    Keys: ``variant``, ``label``, ``formula``, ``source``, ``identity_path``,
    ``final_stream_rms`` (RMS of ``x_L``), ``output_rms`` (RMS of what the head sees),
    ``input_grad_norm`` (``|| d(w . y_L) / d x_0 ||``), ``relative_input_grad_norm`` (the
    same divided by ``||w||``: 1 means the readout's gradient arrives at its own size),
    ``peak_stream_rms`` and ``min_input_grad_norm`` (over depths ``1 .. layers``).
    """
    specs = list(VARIANTS.values()) if variants is None else [variant_spec(v) for v in variants]
    rows = []
    for spec in specs:
        name = spec.name
        profile = stack_profile(spec, layers, width, seed, branch_scale)
        rows.append(
            {
                "variant": name,
                "label": spec.label,
                "formula": spec.formula,
                "source": spec.source,
                "identity_path": spec.identity_path,
                "final_stream_rms": profile.final_stream_rms,
                "output_rms": profile.output_rms,
                "input_grad_norm": profile.final_input_grad_norm,
                "relative_input_grad_norm": profile.final_input_grad_norm / profile.readout_norm,
                "peak_stream_rms": float(profile.stream_rms.max()),
                "min_input_grad_norm": float(profile.input_grad_norm.min()),
            }
        )
    return rows


def relative_input_gradients(variant, layers: int = 48, seeds=range(8), width: int = 16,
                             branch_scale: float = 1.0) -> np.ndarray:
    """The family table's gradient for several seeds: one value per seed, in the order given::

        || d(w . y_L) / d x_0 || / ||w||

    with ``L = layers`` and ``w`` each seed's own random readout, so 1 means the gradient
    reaches the input at the size the readout sent it (the raw norm also carries ``||w||``,
    which varies from seed to seed). Summarise it with ``np.median``, ``min``, ``max``.
    """
    seeds = list(seeds)
    if not seeds:
        raise ValueError("seeds: need at least one seed")
    profiles = [stack_profile(variant, layers, width, seed, branch_scale) for seed in seeds]
    return np.array([p.final_input_grad_norm / p.readout_norm for p in profiles])


#: The numbers first, the formula last: on a phone the table scrolls sideways inside its box.
_COLUMNS = (
    ("label", "variant"),
    ("identity_path", "identity path"),
    ("final_stream_rms", "stream RMS"),
    ("output_rms", "head's RMS"),
    ("relative_input_grad_norm", "gradient / ‖w‖"),
    ("formula", "block"),
)


def _cell(value, digits: int) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, numbers.Real):
        return f"{float(value):.{digits}g}"
    return str(value)


def format_family_table(rows, fmt: str = "html", digits: int = 3, formula: bool = True) -> str:
    """Rows of :func:`family_table` as an HTML (``fmt="html"``) or Markdown table.

    Columns: variant, identity path, stream RMS (of ``x_L``), the head's RMS (of ``y_L``),
    the input gradient over ``||w||``, block formula (left out with ``formula=False``, for a
    narrower table).
    """
    if fmt not in ("html", "markdown"):
        raise ValueError(f"fmt: must be 'html' or 'markdown', got {fmt!r}")
    digits = check_int(digits, "digits", minimum=1)
    columns = _COLUMNS if formula else _COLUMNS[:-1]
    if fmt == "markdown":
        cells = [[_cell(row[key], digits).replace("|", "\\|") for key, _ in columns] for row in rows]
        if formula:
            for row in cells:
                row[-1] = f"`{row[-1]}`"  # the formula, as code: its underscores are not emphasis
        return tabulate(cells, headers=[title for _, title in columns], tablefmt="github",
                        disable_numparse=True) + "\n"
    head = "".join(f"<th>{html.escape(title)}</th>" for _, title in columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(_cell(row[key], digits))}</td>" for key, _ in columns) + "</tr>"
        for row in rows
    )
    return f'<table class="lnworked-family-table"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
