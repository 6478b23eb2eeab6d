"""The `twilight` dispatcher: version, help, and clean errors for missing optional packages."""

import sys

import pytest

from twilight_env import __version__
from twilight_env.cli import main


def test_version(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    assert __version__ in capsys.readouterr().out


def test_missing_optional_dependency_is_a_clean_error(monkeypatch, capsys, tmp_path):
    # a core-only install has no tqdm/openskill: the command must name the extra, not crash
    for name in ("tqdm", "tqdm.auto", "openskill", "openskill.models"):
        monkeypatch.setitem(sys.modules, name, None)
    rc = main(["arena", "random", "random", "--deals", "2", "--workers", "1", "--quiet",
               "--out", str(tmp_path / "a")])
    err = capsys.readouterr().err
    assert rc == 2
    assert "'study' extra" in err and 'pip install -e ".[study]"' in err


def test_a_broken_install_is_not_blamed_on_an_extra(monkeypatch, capsys):
    """A name missing inside this package (a half-updated checkout) is not a missing extra:
    the message says the install is broken and how to mend it, not which extra to add."""
    from twilight_env import cli

    def broken(name):
        raise ImportError("cannot import name 'CONFIG_KEYS' from 'twilight_env.records.record_core'",
                          name="twilight_env.records.record_core")

    monkeypatch.setattr(cli.importlib, "import_module", broken)
    with pytest.raises(SystemExit) as e:
        main(["arena", "random", "random"])
    err = capsys.readouterr().err
    assert e.value.code == 2
    assert "broken or out of date" in err and "CONFIG_KEYS" in err
    assert "extra" not in err


CORE_ONLY = ("openskill", "scipy", "matplotlib", "tqdm")
"""The study extra's packages a core-only install lacks (numba is optional everywhere)."""


@pytest.mark.parametrize("command,blocked", [
    (["arena", "random", "heuristic"], ("openskill",)),
    (["ladder", "random", "heuristic"], ("openskill",)),
    (["edge", "random"], ("tqdm",)),
    (["arena", "random", "heuristic"], CORE_ONLY),
    (["edge", "random"], CORE_ONLY),
    (["edge", "random", "--scoring", "individual"], CORE_ONLY),
    (["ladder", "random", "heuristic"], CORE_ONLY),
])
@pytest.mark.parametrize("out", [None, "parent/run"])
def test_a_missing_dependency_fails_before_any_folder_is_made(monkeypatch, capsys, tmp_path, command, blocked, out):
    """Without a package of the study extra, arena, edge and ladder stop with one line naming
    the package and the extra, exit status 2, before making an output folder: neither the
    default out/ (the working directory is tmp_path) nor the parent of --out appears."""
    for name in blocked:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.chdir(tmp_path)
    args = [*command, "--deals", "2", "--workers", "1", "--quiet"] + (["--out", str(tmp_path / out)] if out else [])
    rc = main(args)
    captured = capsys.readouterr()
    assert rc == 2, captured.err
    assert captured.out == "" and captured.err.count("\n") == 1, captured.err
    assert any(f"No module named {m!r}" in captured.err for m in blocked) and "'study' extra" in captured.err
    assert "step 1" not in captured.err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("error", [EOFError("Compressed file ended before the end-of-stream marker was reached"),
                                   RecursionError("maximum recursion depth exceeded")])
def test_damaged_input_a_reader_missed_is_still_one_line(monkeypatch, capsys, tmp_path, error):
    """A last guard: EOFError/RecursionError from a reader are one line, exit 2, no traceback."""
    import twilight_env.records.replay_log as replay_log

    def boom(args):
        raise error

    monkeypatch.setattr(replay_log, "run", boom)
    assert main(["replay", str(tmp_path / "x.json")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("twilight replay: error: damaged input (") and str(error) in err


def test_train_minutes_count_from_training_not_start_up(tmp_path, monkeypatch, capsys):
    """``twilight train --minutes M`` trains for M minutes after start-up and the first
    evaluation: a start-up longer than the budget (here an evaluation made slow) used to
    leave no time to train, and the summary said 0.0 decisions/s."""
    pytest.importorskip("torch")
    pytest.importorskip("tensorboard")
    import dataclasses
    import time

    from twilight_env.training import train as tr

    real = tr.evaluate

    def slow_evaluate(*a, **k):
        time.sleep(1.5)  # longer than the whole budget below (0.01 min = 0.6 s)
        return real(*a, **k)

    monkeypatch.setattr(tr, "evaluate", slow_evaluate)
    # the command's settings, with a small network and chunk so that the test is quick
    monkeypatch.setattr(tr, "config_from_args", lambda args, real=tr.config_from_args: dataclasses.replace(
        real(args), chunk=500, trunk=(32,), head=(16,), batch_size=128))
    rc = main(["train", "--players", "4", "--minutes", "0.01", "--actors", "0", "--eval-deals", "2",
               "--eval-opponents", "random", "--games-per-actor", "16",
               "--logdir", str(tmp_path / "runs"), "--no-progress"])
    out = capsys.readouterr().out
    assert rc == 0
    decisions = int(next(line for line in out.splitlines() if line.startswith("decisions")).split()[1].replace(",", ""))
    assert decisions > 0 and "decisions/s overall" in out and " 0.0 decisions/s" not in out


def test_train_summary_without_self_play_says_so():
    pytest.importorskip("torch")
    from twilight_env.training.train import summary_table

    s = {"run_dir": "runs/x", "players": 4, "actors": 2, "decisions": 0, "updates": 0, "episodes": 0,
         "selfplay_decisions_per_s": 0.0, "actor_decisions_per_s": None, "wall_seconds": 31.0, "eval": {}}
    text = summary_table(s)
    assert "decisions/s" not in text and "give more --minutes" in text


def _subcommand_parser(name):
    import importlib

    from twilight_env import cli

    _, subparsers = cli.build_parser()
    importlib.import_module(cli.SUBCOMMANDS[name][0]).add_arguments(subparsers[name])
    return subparsers[name]


@pytest.mark.parametrize("name", ["deal", "arena", "edge", "ladder", "play", "train", "replay", "serve"])
def test_every_option_with_a_default_says_it_in_its_help(name):
    """``twilight CMD --help`` gives every option's default (an option whose default is
    None, False or empty is one that is off unless given)."""
    import argparse

    missing = [a.option_strings or a.dest for a in _subcommand_parser(name)._actions
               if a.help not in (None, argparse.SUPPRESS) and a.default not in (None, False, [], argparse.SUPPRESS)
               and not isinstance(a, argparse._HelpAction) and "default" not in a.help]
    assert missing == [], missing


@pytest.mark.parametrize("name", ["deal", "arena", "edge", "play", "train"])
def test_every_subcommands_help_ends_with_where_the_docs_are(name, capsys):
    """``twilight CMD --help`` names COMMANDS.md of this install on one line (a path to
    copy), after the subcommand's own epilog (edge's modes, play's inputs)."""
    from twilight_env.util.docs import doc_path

    with pytest.raises(SystemExit) as e:
        main([name, "--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert out.endswith(f"\nEvery command, option and agent spec: {doc_path('COMMANDS.md')}\n"), out[-400:]
    if name in ("edge", "play"):
        assert ("modes (each takes only the options listed)" if name == "edge" else "Inputs at a prompt") in out


@pytest.mark.parametrize("name", ["deal", "arena", "edge", "ladder", "play", "train", "replay", "serve"])
def test_no_help_recommends_a_deprecated_agent_name(name):
    """``twilight CMD --help`` gives examples with the current agent names (``policy``,
    ``guided``), never a deprecated one (``exit``, ``exit-search``: docs/API.md, "Network
    agents: names and families") as a spec."""
    import re

    from twilight_env.agents.base import declarations

    names = sorted((n for n, d in declarations().items() if d.replaced_by), key=len, reverse=True)
    spec = re.compile(r"(?<![\w-])(" + "|".join(map(re.escape, names)) + r")(?=[:,)])")
    text = _subcommand_parser(name).format_help()
    assert names and spec.findall(text) == [], spec.findall(text)


@pytest.mark.parametrize("name, specs", [("edge", ["random"]), ("ladder", ["random", "heuristic"])])
def test_the_least_deals_the_help_gives_is_the_least_accepted(name, specs, tmp_path, capsys):
    """``--deals``'s help says its range, ``(LOW..HIGH; ...)``: LOW deals run, LOW - 1 is
    refused (edge's help once said 1 while the study refused it: intervals need two deals)."""
    import re

    action = next(a for a in _subcommand_parser(name)._actions if "--deals" in a.option_strings)
    low = int(re.match(r"[^(]*\((\d+)\.\.", action.help).group(1))
    extra = ["--boot", "10", "--matches", "10"] if name == "edge" else ["--boot", "10"]
    base = [name, *specs, "--workers", "1", "--quiet", *extra]
    assert main([*base, "--deals", str(low - 1), "--out", str(tmp_path / "under")]) == 2
    assert "--deals" in capsys.readouterr().err
    assert main([*base, "--deals", str(low), "--out", str(tmp_path / "least")]) == 0
