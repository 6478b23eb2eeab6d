"""``python -m twilight_env.training.reduced_solve --help`` gives every option's default."""

import re

import pytest

from twilight_env.training import reduced_solve as rs


def _option_helps(text: str) -> dict[str, str]:
    """The help text of each long option of an argparse ``--help`` page, joined on one line."""
    body = text.split("options:", 1)[1]
    blocks = re.split(r"\n  (?=-)", "\n" + body)
    helps = {}
    for block in blocks:
        m = re.match(r"\s*(?:-\w, )?(--[\w-]+)", block)
        if m:
            helps[m.group(1)] = " ".join(block.split())
    return helps


def test_help_names_every_default(capsys):
    with pytest.raises(SystemExit) as e:
        rs.main(["--help"])
    assert e.value.code == 0
    text = capsys.readouterr().out
    assert text.startswith("usage: python -m twilight_env.training.reduced_solve"), text
    helps = _option_helps(text)
    assert set(helps) == {"--help", "--sizes", "--iterations", "--count-only", "--seconds", "--lp-max-slots", "--out"}
    for option, help_ in helps.items():
        if option != "--help":
            assert "default" in help_, (option, help_)
    assert "default 1:3 1:4" in helps["--sizes"] and "default 1000" in helps["--iterations"]
    assert "default 200000" in helps["--lp-max-slots"] and "default results/reduced_decks" in helps["--out"]
