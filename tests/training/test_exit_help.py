"""``python -m twilight_env.training.exit CMD --help`` (the README's expert-iteration
command) explains every option and gives its default."""

import argparse

import pytest

from twilight_env.training import exit as exit_cli


def _subparsers():
    parser = exit_cli.build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return sub.choices


@pytest.mark.parametrize("name", ["generate", "train", "iterate", "export"])
def test_every_option_is_explained_with_its_default(name):
    parser = _subparsers()[name]
    unexplained = [a.option_strings or a.dest for a in parser._actions if not a.help]
    no_default = [a.option_strings for a in parser._actions
                  if a.option_strings and a.default not in (None, False, argparse.SUPPRESS)
                  and not isinstance(a, argparse._HelpAction) and "default" not in (a.help or "")]
    assert unexplained == [] and no_default == [], (unexplained, no_default)


def test_iterate_help_prints_the_defaults(capsys):
    with pytest.raises(SystemExit) as e:
        exit_cli.build_parser().parse_args(["iterate", "--help"])
    assert e.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    for shown in ("expert iterations (default 3)", "deals per iteration (default 200)",
                  "iterations per decision (default 1000)", "Adam learning rate (default 0.001)",
                  "shared trunk (default 256 256)"):
        assert shown in text, shown
