"""``--quiet`` is the one word for "no progress bar" across the commands: the training
commands take it beside their older ``--no-progress`` (one option, one setting)."""

import argparse

import pytest


def _parsers():
    from twilight_env.training.best_response import build_parser as br_parser
    from twilight_env.training.exit import build_parser as exit_parser
    from twilight_env.training.train import add_arguments

    train = argparse.ArgumentParser()
    add_arguments(train)
    out = {"train": train, "best_response": br_parser()}
    ex = exit_parser()
    sub = next(a for a in ex._actions if isinstance(a, argparse._SubParsersAction))
    for name in ("train", "generate", "iterate"):
        out[f"exit {name}"] = sub.choices[name]
    return out


def test_quiet_and_no_progress_are_one_option_everywhere():
    pytest.importorskip("torch")
    for name, parser in _parsers().items():
        opts = [a for a in parser._actions if "--quiet" in a.option_strings]
        assert len(opts) == 1, name
        assert "--no-progress" in opts[0].option_strings and opts[0].dest == "no_progress", name
        assert opts[0].default is False, name
