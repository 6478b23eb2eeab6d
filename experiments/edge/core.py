"""What every mode of ``twilight edge`` shares: the study's settings, the seating of a
deal's three plays, the checkpoint format, the finished-run readers and the layout of what
the modes print (lines of at most :data:`TERMINAL_WIDTH` characters: :func:`wrap`,
:func:`terminal_blocks`).

Module order inside :mod:`twilight_env.experiments.edge` (each imports only those before it):
:mod:`~twilight_env.experiments.edge.matches` (the vectorised match rules) < ``core`` (this
module) < :mod:`~twilight_env.experiments.edge.solo_edge` (team scoring, R7.5) and
:mod:`~twilight_env.experiments.edge.individual_edge` (individual scoring, R8) <
:mod:`~twilight_env.experiments.edge.edge_strength` (the edge at every ladder rung, and
``--compare``), :mod:`~twilight_env.experiments.edge.goals_333`,
:mod:`~twilight_env.experiments.edge.handicap` < :mod:`~twilight_env.experiments.edge.command`
(the ``twilight edge`` command line: one table of modes and the flags each takes).

:class:`StudySettings` is one study's settings, checked once when built;
:func:`prepare_run` turns them into a :class:`PreparedRun` (checkpoint, configurations,
deals, output folder) for a new or a resumed run.
"""

from __future__ import annotations

import dataclasses
import os
import zlib
from dataclasses import dataclass, field
from typing import Any, Sequence

from twilight_env.records.dealsets import check_deals, deal_set, run_seed
from twilight_env.util.argtypes import MAX_DEALS
from twilight_env.util.distributed import check_address, prepare_runner
from twilight_env.util.jsonfile import JsonFileError, read_json
from twilight_env.util.seeding import check_seed

from twilight_env.experiments.common import (RunCheckpoint, check_deal_source, check_int, check_keys,
                                             check_new_file, check_new_folder, check_specs, check_workers,
                                             out_dir, resume_conflicts)
from twilight_env.experiments.edge.matches import check_match_settings

DEFAULT_DEALS = 8000
"""Default N. With the default agent (:data:`DEFAULT_SPEC`, the shipped network alone) 8,000
deals took 23 s of wall time on 2 idle cores (43 s of CPU) and gave a 95% CI half-width of
1.5 deal points for Moon − Sun (target ≤ 2); with ``heuristic``, 10,000 deals took 74 s of
CPU time (half-width 1.5)."""
DEFAULT_SPEC = "policy"
"""The agent of ``twilight edge`` without a spec: ``policy:default``, the shipped expert-iteration
network alone (NumPy, no search, no torch), which beats default ``ismcts`` on held-out deals
(``results/exit_scale/README.md``), so the main command answers at strong play; ``heuristic``
is one argument away (``twilight edge heuristic``)."""
DEFAULT_TARGET = 1000
"""Match target of the simulations, points (R6.1)."""
DEFAULT_BOOT = 200
"""Bootstrap resamples of the deal set."""
DEFAULT_MATCHES = 1000
"""Simulated matches per bootstrap resample."""
ROTATIONS = ((0, 1, 3), (3, 0, 1), (1, 3, 0))
"""Play r: the dealt hands (by dealt seat) placed on seats 0, 1, 3 (R7.4 rotation)."""
MIN_BOOTSTRAP_DEALS = 30
"""Below this many deals the answer warns that the percentile bootstrap's match interval
is not reliable: resampling a handful of deals gives intervals far too narrow (with 2
deals, 0.99 to 1.00 while the deal-points interval spans hundreds of points)."""
SCORINGS = ("team", "individual")
"""3-player scoring rules a study plays: ``team`` (R7.5) or ``individual`` (R8)."""

CHECKPOINT = "edge.checkpoint.json"
"""File name of a team-scoring run's checkpoint in its output folder (removed when the run finishes)."""
RESULT = "edge.json"
"""File name of a finished team-scoring run's figures."""
INDIVIDUAL_CHECKPOINT = "individual.checkpoint.json"
"""File name of an individual-scoring run's checkpoint."""
INDIVIDUAL_RESULT = "individual.json"
"""File name of a finished individual-scoring run's figures."""

TERMINAL_WIDTH = 100
"""Widest line ``twilight edge`` prints (characters); the files keep the wide table."""


def wrap(text: str, indent: str = "  ") -> list[str]:
    """``text`` wrapped at :data:`TERMINAL_WIDTH`, later lines indented by ``indent``;
    words (file paths, agent specs) are never broken, so a line is wider only where one
    word is."""
    import textwrap

    return textwrap.wrap(text, TERMINAL_WIDTH, subsequent_indent=indent, break_on_hyphens=False,
                         break_long_words=False) or [""]


def terminal_blocks(header: list[str], rows: list[list]) -> list[str]:
    """A table too wide for the terminal, printed as one block per row: the row's first
    cell on a line of its own, then one ``column: value`` line per other column, the values
    aligned, each line wrapped at :data:`TERMINAL_WIDTH` (the files keep the wide table)."""
    names = [str(h) for h in header[1:]]
    pad = max((len(n) for n in names if len(n) <= 30), default=0) + 1  # a longer name goes unaligned
    out = []
    for k, row in enumerate(rows):
        out += ([""] if k else []) + wrap(str(row[0]))
        for name, value in zip(names, row[1:]):
            out += wrap(f"  {(name + ':').ljust(pad)} {value}", "      ")
    return out


# ---------------------------------------------------------------------------------
# seating and configurations
# ---------------------------------------------------------------------------------

def rotated_deal(deal, r: int) -> list[list[str]]:
    """The deal of play ``r`` (0..2): players' hands rotated, new-moon hand fixed (R7.4;
    the table in :mod:`twilight_env.experiments.edge.solo_edge`)."""
    a, b, c = ROTATIONS[r]
    return [list(deal[a]), list(deal[b]), list(deal[2]), list(deal[c])]


def configurations(specs: Sequence[str], solo: str | None, sun: str | None) -> list[tuple[str, str]]:
    """(solo spec, Sun spec) pairs to run: each spec on all chairs, then the mixed pair if given."""
    configs = [(s, s) for s in specs]
    if solo or sun:
        base = specs[0] if specs else DEFAULT_SPEC
        configs.append((solo or base, sun or base))
    if not configs:
        configs = [(DEFAULT_SPEC, DEFAULT_SPEC)]
    return configs


def config_key(solo: str, sun: str) -> int:
    """Stream key of a configuration, from its two specs (CRC-32 of ``solo``, NUL, ``sun``):
    a configuration's agents and bootstrap draw the same numbers whatever other
    configurations are listed with it, and in whatever order."""
    return zlib.crc32(f"{solo}\x00{sun}".encode())


# ---------------------------------------------------------------------------------
# settings
# ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class StudySettings:
    """The settings of one edge study (``twilight edge [SPEC ...]``, with ``--scoring``,
    ``--solo``/``--sun`` or ``--resume``), checked once when built.

    A field left None takes its default (given beside it), or, with ``resume``, the value
    saved in the run's checkpoint. Fields:

    - ``specs``: agent specs, each playing all three chairs (a tuple of str; a list is
      taken); none and no ``solo``/``sun``: ``DEFAULT_SPEC``.
    - ``solo``, ``sun``: mixed strengths, the solo's agent (seat 0, deciding for the new
      moon, R7.3) and the Sun seats' agent (1 and 3); one alone pairs with the first spec.
    - ``deals``: N deals, each played 3 times (int >= 2; None: ``DEFAULT_DEALS``, or all of
      ``deals_file``).
    - ``seed``: seed of the deals, agents and bootstrap (int >= 0; None: the seed saved in
      ``deals_file``, else 0).
    - ``deals_file``: play the deals of this 3-player JSON deal file; ``save_deals``: write
      the deals used to this file (team scoring only).
    - ``target``: match target of the simulations, points (R6.1; 1..100,000, default 1000);
      ``boot``: bootstrap resamples of the deal set (1..10,000, default 200); ``matches``:
      simulated matches per resample (1..100,000, default 1000); ``boot × matches`` at
      most 10,000,000.
    - ``scoring``: ``"team"`` (R7.5) or ``"individual"`` (R8).
    - ``out``: output folder (None: ``out/{edge|individual}__{seed}__{unixtime}``);
      ``force``: write over outputs in ``out`` and an existing ``save_deals`` file.
    - ``records``: folder for ``edge.records.jsonl.gz``, every play's deal record (team
      scoring only, not with ``resume``).
    - ``resume``: output folder of an unfinished run: its checkpoint's settings are kept,
      so only ``workers``, ``progress``, ``verbose`` and ``ray`` may be given with it.
    - ``workers``: local worker processes (int >= 1; 1 plays in this process);
      ``ray``: a Ray address (``auto``, ``local``, ``HOST:PORT``), playing there instead.
    - ``progress``: show a progress bar; ``verbose``: print the table and answers.

    Raises:
        ValueError: on the first field that is wrong, naming its flag (``--deals``, ...)
            and what it allows; an agent spec that cannot be built (every spec is built
            once here); settings given with ``resume``.
    """

    specs: tuple[str, ...] = ()
    solo: str | None = None
    sun: str | None = None
    deals: int | None = None              # deals N, each played 3 times
    seed: int | None = None
    deals_file: str | None = None
    save_deals: str | None = None
    target: int | None = None             # match target, points (R6.1)
    boot: int | None = None               # bootstrap resamples
    matches: int | None = None            # simulated matches per resample
    scoring: str = "team"                 # "team" (R7.5) or "individual" (R8)
    out: str | None = None
    force: bool = False
    records: str | None = None
    resume: str | None = None
    workers: int = 1                      # local worker processes
    ray: str | None = None
    progress: bool = True
    verbose: bool = True

    # the command-line flag of each field that a resumed run takes from its checkpoint
    FLAGS = {"specs": "specs", "deals": "--deals", "seed": "--seed", "out": "--out", "solo": "--solo",
             "sun": "--sun", "deals_file": "--deals-file", "save_deals": "--save-deals", "target": "--target",
             "boot": "--boot", "matches": "--matches", "force": "--force", "records": "--records"}

    def __post_init__(self):
        specs = self.specs
        if isinstance(specs, str) or not isinstance(specs, (list, tuple)):
            raise ValueError(f"specs must be a list of agent spec strings, got {specs!r}")
        object.__setattr__(self, "specs", tuple(specs))
        check_workers(self.workers)
        if isinstance(self.deals, int) and self.deals > MAX_DEALS:  # before any deal is drawn (a resume grows to it)
            raise ValueError(f"--deals must be an integer in 2..{MAX_DEALS:,}, got {self.deals:,}")
        object.__setattr__(self, "seed", check_seed(self.seed, "--seed"))
        if self.scoring not in SCORINGS:
            raise ValueError(f"--scoring must be one of {', '.join(SCORINGS)}, got {self.scoring!r}")
        for name in ("progress", "verbose", "force"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be True or False, got {getattr(self, name)!r}")
        for name in ("solo", "sun", "deals_file", "save_deals", "out", "records", "resume"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, str) or not value):
                raise ValueError(f"--{name.replace('_', '-')} must be a non-empty string, got {value!r}")
        if self.ray is not None:
            check_address(self.ray)
        if self.resume is not None:
            resume_conflicts([(flag, list(self.specs) if name == "specs" else getattr(self, name))
                              for name, flag in self.FLAGS.items()],
                             allowed="--workers, --ray, --quiet and --deals (which grows the run)")
            return
        if self.scoring == "individual":
            given = [flag for flag, v in (("--save-deals", self.save_deals), ("--records", self.records))
                     if v is not None]
            if given:
                raise ValueError(f"individual scoring writes no game records and saves no deal file; do not give "
                                 f"{', '.join(given)} with --scoring individual")
        check_specs(list(self.specs), num_players=3)  # the study is 3-player (R7)
        for flag, spec in (("--solo", self.solo), ("--sun", self.sun)):
            if spec is not None:
                check_specs([spec], flag, num_players=3)
        if self.deals is not None and (isinstance(self.deals, bool) or not isinstance(self.deals, int)
                                       or self.deals < 2):
            raise ValueError(f"--deals must be at least 2 (intervals need two deals), got {self.deals!r}")
        check_match_settings(self.target_or_default, self.boot_or_default, self.matches_or_default)

    @property
    def target_or_default(self) -> int:
        return DEFAULT_TARGET if self.target is None else self.target

    @property
    def boot_or_default(self) -> int:
        return DEFAULT_BOOT if self.boot is None else self.boot

    @property
    def matches_or_default(self) -> int:
        return DEFAULT_MATCHES if self.matches is None else self.matches

    @classmethod
    def of(cls, settings: "StudySettings | Sequence[str] | None" = None, **options: Any) -> "StudySettings":
        """Settings from a :class:`StudySettings` (with ``options`` replacing fields) or from
        agent specs and field values: ``of(["random"], deals=20)``.

        Raises:
            TypeError: an option that is no field (the message lists the fields).
            ValueError: as the class.
        """
        names = [f.name for f in dataclasses.fields(cls)]
        unknown = sorted(set(options) - set(names))
        if unknown:
            raise TypeError(f"no study setting {', '.join(unknown)}; the settings are {', '.join(names)}")
        if isinstance(settings, cls):
            return dataclasses.replace(settings, **options) if options else settings
        if "specs" in options and settings is not None:
            raise TypeError("specs given twice (as the first argument and as specs=)")
        if settings is not None:
            options["specs"] = settings
        if options.get("specs") is None:
            options["specs"] = ()
        return cls(**options)


@dataclass(frozen=True)
class PreparedRun:
    """A new or resumed study ready to play (:func:`prepare_run`).

    Fields: ``checkpoint`` (written, so the folder is resumable from the start),
    ``configs`` ((solo spec, Sun spec) pairs), ``seed`` (of agents and bootstrap),
    ``target`` (match target, points), ``boot`` (bootstrap resamples), ``matches``
    (simulated matches per resample), ``deals`` (N deals, each 4 hands of card codes),
    ``deals_source`` (where the deals came from, :func:`twilight_env.records.dealsets.deal_set`)
    and ``folder`` (the output folder).
    """

    checkpoint: RunCheckpoint
    configs: list[tuple[str, str]]
    seed: int
    target: int
    boot: int
    matches: int
    deals: list = field(repr=False)
    deals_source: dict
    folder: str


# ---------------------------------------------------------------------------------
# checkpoints
# ---------------------------------------------------------------------------------

class StudyCheckpoint(RunCheckpoint):
    """What the checkpoints of both scorings hold (:class:`~twilight_env.experiments.common.RunCheckpoint`):
    the settings, the deals and per configuration key each finished deal's result. The
    subclasses (:class:`twilight_env.experiments.edge.solo_edge.Checkpoint`,
    :class:`twilight_env.experiments.edge.individual_edge.Checkpoint`) check the results."""

    COMMAND = "twilight edge"
    SETTINGS = ("configs", "seed", "target", "boot", "matches", "deals_source")
    """Keys of the settings object (all required; any other key is refused)."""
    EXTRA_SETTINGS: dict = {}
    """Further settings a subclass requires, with the only value allowed."""

    @classmethod
    def specs_of(cls, settings: dict) -> list[str]:
        """Every agent spec of the run's configurations (``settings["configs"]``: ``[[solo, sun], ...]``)."""
        return [spec for pair in settings["configs"] for spec in pair]

    @classmethod
    def parse_common(cls, doc: dict, extra: dict | None = None) -> tuple[dict, list, dict]:
        """``(settings, deals, {key: results of that configuration})`` after checking what
        every edge-type checkpoint holds: every setting's type and range (``seed`` >= 0,
        ``target``, ``boot``, ``matches`` in range, :func:`check_match_settings`; agent specs as strings, no configuration
        twice), no unknown setting, at least 2 valid deals of 3 players that match their
        source (:func:`~twilight_env.experiments.common.check_deal_source`) and results only for listed
        configurations; the per-deal results are left to the caller. ``extra``: further
        required settings with the only value allowed (default ``EXTRA_SETTINGS``).

        Raises:
            ValueError: naming the field and the allowed values.
        """
        extra = cls.EXTRA_SETTINGS if extra is None else extra
        st = check_keys(doc["settings"], "'settings'", cls.SETTINGS + tuple(extra))
        for k, v in extra.items():
            if st[k] != v:
                raise ValueError(f"settings {k!r} must be {v!r} in this file, got {st[k]!r}")
        raw = st["configs"]
        if (not isinstance(raw, list) or not raw or any(not isinstance(c, list) or len(c) != 2 for c in raw)
                or any(not isinstance(x, str) or not x.strip() for c in raw for x in c)):
            raise ValueError(f"settings 'configs' must be a non-empty list of [solo spec, Sun spec] pairs of "
                             f"strings, got {raw!r}")
        configs = [(a, b) for a, b in raw]
        if len(set(configs)) != len(configs):
            raise ValueError(f"settings 'configs' lists a configuration twice: {raw!r}")
        check_int(st["seed"], "settings 'seed'", 0)
        check_match_settings(st["target"], st["boot"], st["matches"], lambda k: f"settings {k!r}")
        deals = check_deals(doc["deals"], "its deals")
        if len(deals) < 2:
            raise ValueError(f"it holds {len(deals)} deal(s); a run has at least 2")
        check_deal_source(st["deals_source"], "settings 'deals_source'", 3, deals, st["seed"])
        keys = {str(config_key(a, b)): (a, b) for a, b in configs}
        if not isinstance(doc["done"], dict):
            raise ValueError("'done' is not an object")
        for k, v in doc["done"].items():
            if k not in keys:
                raise ValueError(f"it holds results of a configuration that its settings do not list (key {k}); "
                                 "were the settings edited?")
            if not isinstance(v, dict):
                raise ValueError(f"the results of configuration {keys[k]} are not an object")
            for d in v:
                if not (isinstance(d, str) and d.isdigit() and int(d) < len(deals)):
                    raise ValueError(f"the results of configuration {keys[k]} name deal {d!r}; the run's deals "
                                     f"are 0..{len(deals) - 1}")
        st["configs"] = [list(c) for c in configs]
        return st, deals, doc["done"]


def prepare_run(settings: StudySettings, checkpoint_cls: type[StudyCheckpoint], name: str) -> PreparedRun:
    """The settings, deals, output folder and checkpoint of a new or resumed edge-type run
    (shared by :func:`twilight_env.experiments.edge.solo_edge.run_study` and
    :func:`twilight_env.experiments.edge.individual_edge.run_study`).

    A resumed run (``settings.resume``, a folder) takes everything from
    ``checkpoint_cls.load``; a new one checks the output paths, draws or reads the deals,
    makes the folder (``out/{name}__{seed}__{unixtime}`` by default) and writes the first
    checkpoint (with ``checkpoint_cls.EXTRA_SETTINGS``), so it is resumable from the start.

    Raises:
        ValueError: an unreadable or malformed checkpoint (or one whose agents cannot be
            built here), a bad deal file, or an output path that exists (without
            ``force``) or cannot be made.
    """
    s = settings
    if s.resume is not None:
        ckpt = checkpoint_cls.load(s.resume)
        st = ckpt.settings
        configs = [tuple(c) for c in st["configs"]]
        check_specs(sorted({x for c in configs for x in c}), num_players=3)
        return PreparedRun(ckpt, configs, int(st["seed"]), int(st["target"]), int(st["boot"]), int(st["matches"]),
                           ckpt.deals, st["deals_source"], s.resume)
    configs = configurations(s.specs, s.solo, s.sun)
    n = s.deals
    if n is None and not s.deals_file:
        n = DEFAULT_DEALS
    if s.out:
        check_new_folder(s.out, "--out", s.force)
    if s.save_deals:
        check_new_file(s.save_deals, "--save-deals", s.force)
    deal_list, meta = deal_set(n, s.seed, 3, s.deals_file, s.save_deals)
    seed = run_seed(s.seed, meta)
    prepare_runner(s.ray)  # a refused --ray address makes no folder
    folder = out_dir(s.out, name, seed, s.force)
    target, boot, matches = s.target_or_default, s.boot_or_default, s.matches_or_default
    saved = {"configs": [list(c) for c in configs], "seed": seed, "target": target, "boot": boot,
             "matches": matches, "deals_source": meta, **checkpoint_cls.EXTRA_SETTINGS}
    ckpt = checkpoint_cls(folder, saved, [[list(h) for h in d] for d in deal_list])
    ckpt.write()  # the folder is resumable from the start
    return PreparedRun(ckpt, configs, seed, target, boot, matches, deal_list, meta, folder)


# ---------------------------------------------------------------------------------
# finished runs
# ---------------------------------------------------------------------------------

def load_result(folder: str) -> dict:
    """The ``edge.json`` document of an output folder.

    Raises:
        ValueError: if the folder holds no readable edge.json.
    """
    path = os.path.join(folder, RESULT)
    try:
        doc = read_json(path, "edge output")
    except JsonFileError as e:
        raise ValueError(f"no readable edge output in {folder!r}: {e}") from None
    if not isinstance(doc, dict):
        raise ValueError(f"no readable edge output in {folder!r}: {path!r} holds a JSON {type(doc).__name__}, "
                         "not an object")
    return doc


def is_individual_run(folder: str) -> bool:
    """Whether ``folder`` holds a ``--scoring individual`` run (finished or interrupted)."""
    return (os.path.isfile(os.path.join(folder, INDIVIDUAL_CHECKPOINT))
            or os.path.isfile(os.path.join(folder, INDIVIDUAL_RESULT)))


def deal_diffs(result: dict) -> "np.ndarray":
    """Moon − Sun per deal of one configuration of an edge run (R7.5): ``result``'s
    ``moon_points`` and ``sun_points`` (deals × 3 plays) subtracted, each deal's three plays
    averaged. Returns a float array of shape (deals,), deal points."""
    import numpy as np

    return (np.asarray(result["moon_points"], float) - np.asarray(result["sun_points"], float)).mean(axis=1)


def finished_run(option: str, folder: str, what: str) -> dict:
    """The ``edge.json`` of the finished team-scoring edge run in ``folder`` (:func:`load_result`).

    Raises:
        ValueError: naming ``option``: the run in ``folder`` is unfinished (with the command
            that finishes it), or there is no readable edge run there (``what`` says which
            run's output folder the option takes).
    """
    if os.path.isfile(os.path.join(folder, CHECKPOINT)):
        raise ValueError(f"{option} {folder!r} holds an unfinished edge run; finish it first with "
                         f"`twilight edge --resume {folder}`")
    if os.path.isdir(folder) and is_individual_run(folder) and not os.path.isfile(os.path.join(folder, RESULT)):
        raise ValueError(f"{option} {folder!r} holds a --scoring individual run (R8); {option} reads team-scoring "
                         f"edge runs (Moon − Sun per deal), the output folder of {what}")
    try:
        doc = load_result(folder)
    except (OSError, ValueError, KeyError) as e:
        raise ValueError(f"{option} {folder!r}: no finished edge run there ({e}); it takes the output folder "
                         f"of {what}") from None
    ok = (isinstance(doc, dict) and isinstance(doc.get("results"), list) and doc["results"]
          and isinstance(doc.get("configs"), list) and isinstance(doc.get("seed"), int)
          and isinstance(doc.get("deals"), int) and isinstance(doc.get("run_seconds"), (int, float))
          and all(isinstance(r, dict) and {"label", "figures", "moon_points", "sun_points"} <= set(r)
                  for r in doc["results"]))
    if not ok:
        raise ValueError(f"{option} {folder!r}: its edge.json is not a finished edge run's output (it needs "
                         "'seed', 'deals', 'configs', 'run_seconds' and 'results' with each configuration's "
                         f"'label', 'figures', 'moon_points' and 'sun_points'); it takes the output folder of {what}")
    return doc


def check_grow(deals) -> int:
    """``deals`` if it is a valid N to grow a run to (``--resume FOLDER --deals N``).

    Raises:
        ValueError: N not an int >= 2.
    """
    if isinstance(deals, bool) or not isinstance(deals, int) or deals < 2:
        raise ValueError(f"--deals must be at least 2, got {deals!r}")
    return deals
