"""``twilight edge``: the command line of the edge study, as one table of modes.

The command has eight modes. Which one runs follows from the command line (the first
row of :data:`MODES` whose selecting flag is given; the team study when none is), and
:data:`MODES` says which flags each mode takes: the check of a command line and its
error message both come from that table, so an error names the mode and the flags the
mode allows.

| mode | chosen by | what it does |
|---|---|---|
| ``compare`` | ``--compare FOLDER_A FOLDER_B`` | one run's Moon − Sun minus another's, paired by deal (a run under way: its deals finished so far); plays nothing (:func:`~twilight_env.experiments.edge.edge_strength.compare_runs`) |
| ``spread`` | ``--spread FOLDER FOLDER ...`` | the spread of the edges of several agents (e.g. networks of one recipe from different seeds) on the same deals: the agent-level error bar; plays nothing (:mod:`~twilight_env.experiments.edge.spread`) |
| ``status`` | ``--status FOLDER`` | the interim figures of an unfinished run; plays nothing (:mod:`~twilight_env.experiments.edge.interim`) |
| ``resume`` | ``--resume FOLDER`` | finish an interrupted run of either scoring, or with ``--deals N`` grow it to N deals; it keeps the run's settings |
| ``ladder`` | ``--ladder FOLDER`` | the edge at every rung of a 3-player ladder (:mod:`~twilight_env.experiments.edge.edge_strength`) |
| ``crossplay`` | ``--crossplay SPEC SPEC ...`` | every spec as the solo against every spec as the Sun side on the same deals: the matrix, its saddle point and its value (:mod:`~twilight_env.experiments.edge.crossplay`) |
| ``individual`` | ``--scoring individual`` | the study under individual scoring, R8 (:mod:`~twilight_env.experiments.edge.individual_edge`) |
| ``study`` | (none of those) | the team-scoring study, R7.5 (:mod:`~twilight_env.experiments.edge.solo_edge`): each SPEC on all three chairs, and mixed strengths with ``--solo``/``--sun`` |

The settings of a mode are a frozen dataclass checked once when built
(:class:`~twilight_env.experiments.edge.core.StudySettings`,
:class:`~twilight_env.experiments.edge.edge_strength.LadderSettings`).
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass

from twilight_env.records.dealsets import seed_or_deal_set
from twilight_env.util.argtypes import MAX_DEALS, deal_count, interrupt_status, positive_int
from twilight_env.util.distributed import add_ray_argument

from twilight_env.experiments.common import default_workers
from twilight_env.experiments.edge import crossplay, edge_strength, individual_edge, solo_edge
from twilight_env.experiments.edge.core import (CHECKPOINT, DEFAULT_DEALS, DEFAULT_SPEC, INDIVIDUAL_CHECKPOINT,
                                                RESULT, StudySettings, is_individual_run, wrap)

FLAGS: dict[str, str] = {
    "specs": "SPEC", "solo": "--solo", "sun": "--sun", "deals": "--deals", "seed": "--seed",
    "deals_file": "--deals-file", "save_deals": "--save-deals", "target": "--target", "boot": "--boot",
    "matches": "--matches", "scoring": "--scoring", "records": "--records", "out": "--out", "force": "--force",
    "workers": "--workers", "ray": "--ray", "quiet": "--quiet", "resume": "--resume", "ladder": "--ladder",
    "rung_deals": "--rung-deals", "off_ladder": "--off-ladder", "compare": "--compare", "crossplay": "--crossplay",
    "status": "--status", "spread": "--spread"}
"""Every option of ``twilight edge``: the argparse name -> the flag as written."""


@dataclass(frozen=True)
class Mode:
    """One mode of ``twilight edge``: a row of :data:`MODES`.

    Fields: ``name``; ``chosen_by`` (the option that selects the mode, with the value it
    must have, or None for the mode that runs when no other is selected); ``usage`` (how
    the mode is written, for messages); ``what`` (what it does, one line); ``takes`` (the
    options it takes besides its selector, argparse names); ``needs`` (options it cannot
    run without, with what they mean).
    """

    name: str
    chosen_by: tuple[str, object] | None
    usage: str
    what: str
    takes: tuple[str, ...]
    needs: tuple[tuple[str, str], ...] = ()

    def selected(self, args: argparse.Namespace) -> bool:
        if self.chosen_by is None:
            return True
        dest, value = self.chosen_by
        have = getattr(args, dest, None)
        return have is not None if value is None else have == value

    def allowed(self) -> list[str]:
        """The flags this mode takes, as written (its selector first)."""
        own = [] if self.chosen_by is None else [FLAGS[self.chosen_by[0]]]
        return own + [FLAGS[d] for d in self.takes]


_RUNNER = ("workers", "ray", "quiet")
_STUDY = ("specs", "solo", "sun", "deals", "seed", "deals_file", "target", "boot", "matches", "out", "force") + _RUNNER

MODES: tuple[Mode, ...] = (
    Mode("compare", ("compare", None), "twilight edge --compare FOLDER_A FOLDER_B",
         "the paired difference of two runs, from their folders (a run under way: its deals finished so far); it plays nothing", ()),
    Mode("spread", ("spread", None), "twilight edge --spread FOLDER FOLDER [FOLDER ...]",
         "the spread of the edges of several agents' runs on the same deals (networks of one recipe from "
         "different seeds): each edge, the F test of the agents, the recipe's mean edge with its interval; "
         "it plays nothing", ("out", "force")),
    Mode("status", ("status", None), "twilight edge --status FOLDER",
         "the interim figures of an unfinished run (its deals finished so far); it plays nothing", ()),
    Mode("resume", ("resume", None), "twilight edge --resume FOLDER",
         "finishes or, with --deals N, grows a run; it keeps the run's settings", ("deals",) + _RUNNER),
    Mode("ladder", ("ladder", None), "twilight edge --ladder FOLDER",
         "the edge at every rung of a 3-player ladder, on the held-out deal set heldout-2",
         ("deals", "rung_deals", "off_ladder", "boot", "matches", "out") + _RUNNER,
         needs=(("deals", "--deals N (deals per rung)"),)),
    Mode("crossplay", ("crossplay", None), "twilight edge --crossplay SPEC SPEC [SPEC ...] --deals N",
         "each spec as the solo against each as the Sun side on the same deals: the matrix, its pure saddle "
         "point and its value in mixed strategies (rerun with --out FOLDER to continue)",
         ("deals", "seed", "target", "boot", "matches", "out", "force") + _RUNNER,
         needs=(("deals", "--deals N (deals per cell)"),)),
    Mode("individual", ("scoring", "individual"), "twilight edge [SPEC ...] --scoring individual",
         "the study under individual scoring, R8", _STUDY),
    Mode("study", None, "twilight edge [SPEC ...]",
         "the team-scoring study, R7.5, with mixed strengths by --solo/--sun",
         _STUDY + ("save_deals", "records", "scoring")),
)
"""The modes of ``twilight edge``, in the order they are chosen (module docstring)."""


def given(args: argparse.Namespace, dest: str) -> bool:
    """Whether the option ``dest`` was given (a value other than None, False or [])."""
    v = getattr(args, dest, None)
    return not (v is None or v is False or (isinstance(v, list) and not v))


def choose_mode(args: argparse.Namespace) -> Mode:
    """The mode a command line selects, after checking that it takes every option given.

    Raises:
        ValueError: an option the mode does not take (naming the mode, the options it
            takes and, for an option of one other mode, that mode), or a missing one it
            needs.
    """
    mode = next(m for m in MODES if m.selected(args))
    selector = None if mode.chosen_by is None else mode.chosen_by[0]
    bad = [d for d in FLAGS if d != selector and d not in mode.takes and given(args, d)]
    if bad:
        shown = [FLAGS[d] + (f" ({' '.join(args.specs)})" if d == "specs" else "") for d in bad]
        hints = []
        for d in bad:
            homes = [m for m in MODES if m is not mode and d in m.takes + ((m.chosen_by or ("",))[0],)]
            if len(homes) == 1 and homes[0].chosen_by is not None and homes[0].chosen_by[0] != d:
                hints.append(f"{FLAGS[d]} goes with {FLAGS[homes[0].chosen_by[0]]}")
        raise ValueError(f"the {mode.name} mode ({mode.usage}: {mode.what}) does not take {', '.join(shown)}; "
                         f"it takes "
                         f"{', '.join(mode.allowed()) if mode.takes else 'nothing else'}"
                         + (f" ({'; '.join(hints)})" if hints else ""))
    for dest, meaning in mode.needs:
        if not given(args, dest):
            raise ValueError(f"the {mode.name} mode ({mode.usage}) needs {meaning}")
    return mode


def modes_help() -> str:
    """The modes and the options each takes (the epilog of ``twilight edge --help``)."""
    import textwrap

    lines = ["modes (each takes only the options listed):"]
    for m in MODES:
        lines += textwrap.wrap(f"{m.usage}: {m.what}", 96, initial_indent="  ", subsequent_indent="      ")
        lines += textwrap.wrap(f"takes {', '.join(FLAGS[d] for d in m.takes) if m.takes else 'nothing else'}", 96,
                               initial_indent="      ", subsequent_indent="        ")
    return "\n".join(lines)


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add the options of ``twilight edge`` to ``p``, in four groups of ``--help`` (the
    modes each option goes with are in :data:`MODES`, listed in the epilog).

    Args:
        p: the subcommand's parser; its ``formatter_class`` and ``epilog`` are set here.
    """
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = modes_help()
    _add_deal_arguments(p.add_argument_group("agents and deals"))
    _add_simulation_arguments(p.add_argument_group("simulated matches (the bootstrap of the deal set)"))
    _add_run_arguments(p.add_argument_group("running, outputs and resuming"))
    _add_mode_arguments(p.add_argument_group("the other modes (see below)"))


def _add_deal_arguments(g) -> None:
    """The agents and the deals they play (R7.1, R7.2: the solo in seat 0, the Sun players in seats 1 and 3)."""
    g.add_argument("specs", nargs="*", metavar="SPEC",
                   help=f"agent specs; each plays all three chairs (default {DEFAULT_SPEC} unless --solo/--sun)")
    g.add_argument("--deals", type=deal_count, default=None,
                   help=f"number of deals N, each played 3 times (2..{MAX_DEALS:,}; default {DEFAULT_DEALS}, or all of "
                        "--deals-file)")
    g.add_argument("--seed", type=seed_or_deal_set, default=None,
                   help="seed of the deals, agents and bootstrap, or a held-out deal set by name (heldout-1, "
                        "heldout-2, heldout-3: its seed) (default 0; with --deals-file, the seed saved in the file)")
    g.add_argument("--solo", default=None, metavar="SPEC",
                   help=f"mixed strengths: the solo's agent (seat 0; default {DEFAULT_SPEC} when only --sun is given)")
    g.add_argument("--sun", default=None, metavar="SPEC",
                   help=f"mixed strengths: the Sun seats' agent (1 and 3; default {DEFAULT_SPEC} when only --solo is given)")
    g.add_argument("--deals-file", default=None, help="play the deals of this 3-player JSON deal file")
    g.add_argument("--save-deals", default=None,
                   help="write the deals used to this JSON deal file (an existing file needs --force)")


def _add_simulation_arguments(g) -> None:
    """The simulated matches that turn deal scores into match wins (R6.1)."""
    g.add_argument("--target", type=positive_int, default=None,
                   help="match target for the simulations (R6.1, default 1000)")
    g.add_argument("--boot", type=positive_int, default=None, help="bootstrap resamples of the deal set (default 200)")
    g.add_argument("--matches", type=positive_int, default=None,
                   help="simulated matches per bootstrap resample (default 1000)")


def _add_run_arguments(g) -> None:
    """Where and how the deals run, what is written, and resuming an interrupted run."""
    g.add_argument("--workers", type=positive_int, default=None,
                   help="worker processes (default: os.cpu_count(); 1 runs in this process)")
    g.add_argument("--out", default=None,
                   help="output folder (default out/edge__{seed}__{unixtime}); one that holds files needs --force")
    g.add_argument("--force", action="store_true",
                   help="write over the outputs in an existing --out folder and an existing --save-deals file")
    g.add_argument("--quiet", action="store_true",
                   help="no progress (a bar on a terminal, else a line every 30 s on stderr)")
    g.add_argument("--records", default=None, metavar="DIR",
                   help="also write every play of every deal as a game record to DIR/edge.records.jsonl.gz "
                        "(docs/RECORDS.md; twilight replay reads it)")
    g.add_argument("--resume", default=None, metavar="FOLDER",
                   help="finish an interrupted run from the checkpoint in its output folder (its settings are "
                        "kept; only --workers, --ray, --quiet and --deals may be given with it; a run started on "
                        "one runner may be resumed on the other); with --deals N, grow a finished or interrupted "
                        "run to N deals, playing only the new ones")
    add_ray_argument(g)


def _add_mode_arguments(g) -> None:
    """The options that select the ladder, compare and individual modes, and those that go with them."""
    g.add_argument("--ladder", default=None, metavar="FOLDER",
                   help="the edge at every rung of a finished 3-player `twilight ladder` run, on the held-out deal "
                        "set heldout-2, with --deals N per rung; writes edge_vs_strength.md/.json/.png (to resume, "
                        "run the same command with --out FOLDER, the folder it printed; an interruption prints "
                        "that command)")
    g.add_argument("--rung-deals", action="append", default=None, metavar="SPEC=N",
                   help="with --ladder: N deals for the rung SPEC instead of --deals (repeat for several rungs; "
                        "0 leaves the rung out)")
    g.add_argument("--off-ladder", action="append", default=None, metavar="FOLDER",
                   help="with --ladder: also tabulate and plot the finished one-agent edge run in FOLDER (an agent "
                        "that is not a rung, e.g. pimc:inference=model, played with --seed of the ladder's deal set), apart "
                        "from the rungs and against the top rung (repeat for several)")
    g.add_argument("--compare", nargs=2, default=None, metavar=("FOLDER_A", "FOLDER_B"),
                   help="print the edge of the run in FOLDER_A minus that in FOLDER_B, paired by deal "
                        "(two agents' team-scoring runs, one configuration each, on the generated deals of one "
                        "--seed; a run still under way counts its deals finished from deal 0: an interim figure), "
                        "with its 95%% interval; plays nothing")
    g.add_argument("--spread", nargs="+", action="extend", default=None, metavar="FOLDER",
                   help="print the spread of the edges of two or more finished one-agent runs on the generated "
                        "deals of one --seed (networks of one recipe from different seeds): each edge, the "
                        "pairs paired by deal, the F test that the agents differ beyond deal noise, and the "
                        "recipe's mean edge with its 95%% interval (agents and deals both "
                        "random); with --out, writes spread.md/.json there; plays nothing")
    g.add_argument("--status", default=None, metavar="FOLDER",
                   help="print the interim figures of the unfinished team-scoring run in FOLDER (Moon - Sun over "
                        "its deals finished so far, with the 95%% interval); plays nothing")
    g.add_argument("--crossplay", nargs="+", default=None, metavar="SPEC",
                   help="the cross-play matrix of two or more agents: each as the solo against each as the Sun "
                        "side, one edge run per cell on the same --deals N deals of --seed; writes crossplay.md/.json "
                        "with the self-play diagonal, the pure saddle point check and the value of the matrix game "
                        "with both optimal mixtures (to continue an interrupted matrix, run the same command with "
                        "--out FOLDER)")
    g.add_argument("--scoring", choices=("team", "individual"), default=None,
                   help="3-player scoring: 'team' (the default, R7.5) or 'individual' (R8: every seat scores its "
                        "own tricks, the new moon is a fourth line); 'individual' writes individual.md/.json "
                        "(twilight_env.experiments.edge.individual_edge; agents that read it: "
                        "ismcts:backend=numba,scoring=individual)")


def parse_rung_deals(items: list[str] | None) -> dict[str, int]:
    """``["SPEC=N", ...]`` (the spec may hold ``=`` itself: the last one splits) -> ``{SPEC: N}``.

    Raises:
        ValueError: an item without ``=N`` or with a non-integer N.
    """
    out = {}
    for item in items or []:
        spec, sep, n = item.rpartition("=")
        if not sep or not spec or not n.strip().lstrip("-").isdigit():
            raise ValueError(f"--rung-deals takes SPEC=N (N deals for that rung), got {item!r}")
        out[spec.strip()] = int(n)
    return out


def _runner(args) -> dict:
    """The settings of how a run plays: workers, Ray address, progress bar."""
    return {"workers": default_workers() if args.workers is None else args.workers, "ray": args.ray,
            "progress": not args.quiet}


def _study_settings(args, mode: Mode) -> StudySettings:
    """The :class:`StudySettings` of the ``study`` or ``individual`` mode, from the options the mode takes."""
    fields = {d: getattr(args, d) for d in mode.takes if d not in _RUNNER and given(args, d)}
    fields["scoring"] = "individual" if mode.name == "individual" else "team"
    return StudySettings(**fields, **_runner(args))


def _run_study(args, mode: Mode) -> int:
    run = individual_edge.run_study if mode.name == "individual" else solo_edge.run_study
    settings = _study_settings(args, mode)
    try:
        run(settings)
    except KeyboardInterrupt as e:
        return interrupt_status(e)
    return 0


def _run_resume(args, mode: Mode) -> int:
    folder = args.resume
    individual = is_individual_run(folder) and not os.path.isfile(os.path.join(folder, CHECKPOINT))
    if not (os.path.isdir(folder) and (individual or os.path.isfile(os.path.join(folder, CHECKPOINT))
                                       or os.path.isfile(os.path.join(folder, RESULT)))):
        raise ValueError(f"no edge run in {folder!r}: --resume takes the output folder of a twilight edge "
                         f"run, which holds {CHECKPOINT} (or {INDIVIDUAL_CHECKPOINT}) while it is unfinished")
    study = individual_edge if individual else solo_edge
    if args.deals is not None:
        study.grow_run(folder, args.deals)
    try:
        study.run_study(StudySettings(resume=folder, scoring="individual" if individual else "team",
                                      **_runner(args)))
    except KeyboardInterrupt as e:
        return interrupt_status(e)
    return 0


def _run_ladder(args, mode: Mode) -> int:
    settings = edge_strength.LadderSettings(
        args.ladder, args.deals, rung_deals=parse_rung_deals(args.rung_deals), off_ladder=tuple(args.off_ladder or ()),
        boot=args.boot, matches=args.matches, out=args.out, **_runner(args))
    try:
        edge_strength.run_edge_ladder(settings)
    except KeyboardInterrupt as e:
        return interrupt_status(e)
    return 0


def _run_compare(args, mode: Mode) -> int:
    print("\n".join(wrap(edge_strength.compare_line(edge_strength.compare_runs(*args.compare)))))
    return 0


def _run_spread(args, mode: Mode) -> int:
    from twilight_env.experiments.edge.spread import run_spread

    run_spread(args.spread, out=args.out, force=args.force)
    return 0


def _run_status(args, mode: Mode) -> int:
    from twilight_env.experiments.edge.interim import interim_lines

    print("\n".join(interim_lines(args.status)))
    return 0


def _run_crossplay(args, mode: Mode) -> int:
    r = _runner(args)
    settings = crossplay.CrossplaySettings(
        tuple(args.crossplay), args.deals, 0 if args.seed is None else args.seed, target=args.target, boot=args.boot,
        matches=args.matches, out=args.out, force=args.force, workers=r["workers"], ray=r["ray"],
        progress=r["progress"])
    try:
        crossplay.run_crossplay(settings)
    except KeyboardInterrupt as e:
        return interrupt_status(e)
    return 0


RUNS = {"compare": _run_compare, "spread": _run_spread, "resume": _run_resume, "ladder": _run_ladder,
        "individual": _run_study, "study": _run_study, "crossplay": _run_crossplay, "status": _run_status}
"""Mode name -> what runs it (every row of :data:`MODES` has one)."""


def run(args) -> int:
    """Run ``twilight edge`` with parsed arguments (:func:`add_arguments`); returns the exit status.

    Raises:
        ValueError: an option the selected mode does not take (:func:`choose_mode`), or
            any error of the mode's run.
    """
    mode = choose_mode(args)
    return RUNS[mode.name](args, mode)
