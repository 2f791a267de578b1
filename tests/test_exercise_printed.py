"""lnworked.exercise_code.printed: what an exercise's code prints, run in a fresh namespace."""

import pytest

from lnworked.exercise_code import printed


def test_printed_runs_the_code_alone_and_wraps_what_it_prints_as_a_text_block():
    secret = 41  # noqa: F841  (a name of the caller's that the code must not see)
    assert printed("print(6 * 7)\nprint('ok')\n").data == "```text\n42\nok\n```"
    with pytest.raises(NameError):
        printed("print(secret)")


def test_printed_keeps_what_the_code_defined_in_the_namespace_given():
    kept = {}
    printed("x = [1, 2]\nprint(len(x))", kept)
    assert kept["x"] == [1, 2]


@pytest.mark.parametrize("bad", ["", "   \n", None, 3])
def test_printed_refuses_code_that_is_not_a_non_empty_string(bad):
    with pytest.raises(ValueError, match="^code"):
        printed(bad)
