"""The registry of problem families: name, the concept of the book it practises, the kind of
answer, and the generator ``make(rng) -> Problem``.

Exports by answer kind (see :mod:`lnworked.practice.export`): ``number`` goes to a Moodle,
GIFT and QTI numerical question; ``vector`` to a Moodle cloze question with one NUMERICAL
field per entry and to one GIFT and one QTI numerical question per entry; ``choice`` to a
multiple-choice question in each. All go to the handouts, the answer key and ``key.json``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from lnworked.practice import concepts, forward, gradients, warmup
from lnworked.practice.problem import Problem

__all__ = ["Family", "FAMILIES", "get_family", "EXPORTS"]


@dataclass(frozen=True)
class Family:
    name: str
    concept: str
    kind: str  # number | vector | choice
    make: Callable[..., Problem]


EXPORTS = {
    "number": "Moodle numerical, GIFT numerical, QTI numerical",
    "vector": "Moodle cloze (one numerical field per entry), GIFT and QTI numerical per entry",
    "choice": "Moodle multichoice, GIFT multiple choice, QTI multiple choice",
}

_LIST = [
    Family("layer_norm_forward", "LayerNorm forward with γ, β, ε (sign traps)", "vector",
           forward.make_layer_norm_forward),
    Family("post_ln_forward", "Post-LN forward: LN(x + F(x))", "vector", forward.make_post_ln_forward),
    Family("pre_ln_forward", "Pre-LN forward: x + F(LN(x))", "vector", forward.make_pre_ln_forward),
    Family("degenerate_eps", "Degenerate input (σ = 0) and the role of ε", "vector",
           forward.make_degenerate_eps),
    Family("post_ln_backward_scale", "The norm's backward factor γ/√(σ²+ε) for a large sublayer output",
           "number", gradients.make_post_ln_backward_scale),
    Family("pre_ln_gradient_depth", "Pre-LN gradient factor (1 + F′)ᴸ over depth, scalar toy with F′ ≥ 0", "number",
           gradients.make_pre_ln_gradient_depth),
    Family("post_ln_gradient_depth", "Post-LN gradient factor fᴸ, scalar toy with a steady f = (γ/σ)(1 + F′)", "number",
           gradients.make_post_ln_gradient_depth),
    Family("depth_below_threshold", "Depth at which the toy's gradient fᴸ falls below a threshold", "number",
           gradients.make_depth_below_threshold),
    Family("residual_growth", "Pre-LN residual-stream growth √(Var(x₀) + L v), independent writes", "number",
           gradients.make_residual_growth),
    Family("final_norm_homogeneity", "Zero-homogeneity of the final norm, LN(c x)", "vector",
           forward.make_final_norm_homogeneity),
    Family("which_normalized", "Which term is normalised (Post-LN vs Pre-LN)", "choice",
           concepts.make_which_normalized),
    Family("why_stream_grows", "Why the Pre-LN residual stream grows, and how fast under independent writes", "choice",
           concepts.make_why_stream_grows),
    Family("identity_path", "Which placement keeps the identity term of the block Jacobian", "choice",
           concepts.make_identity_path),
    Family("adam_first_update", "AdamW's first update: every parameter moves by about η, whatever its gradient",
           "vector", warmup.make_adam_first_update),
    Family("one_logit_step", "One step on one logit: a more sensitive output keeps a smaller share of its promise",
           "vector", warmup.make_one_logit_step),
    Family("branch_share", "A Post-LN sublayer's branch share ρ under DeepNorm's residual weight α", "number",
           warmup.make_branch_share),
    Family("why_warmup", "Which measured quantity explains why Post-LN needs warmup", "choice",
           warmup.make_why_warmup),
]

#: Every family by name, in the order of the book.
FAMILIES: dict[str, Family] = {f.name: f for f in _LIST}


def get_family(name: str) -> Family:
    """The family called ``name``; an unknown name raises ValueError listing the known ones."""
    if name not in FAMILIES:
        raise ValueError(f"family: unknown family {name!r}; known: {', '.join(FAMILIES)}")
    return FAMILIES[name]
