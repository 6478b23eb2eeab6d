"""Write the notebooks of ``notebooks/`` with nbformat, one per kind of user.

- ``solo_edge.ipynb``: reading a study (a ``twilight edge`` output folder);
- ``train_agent.ipynb``: training a self-play network and watching its learning curve;
- ``my_agent_on_ladder.ipynb``: writing your own agent and putting it on the strength ladder.

Run from the repository root: ``python -m twilight_env.experiments.make_notebook`` writes them
with empty outputs; ``--execute`` runs each one (in ``notebooks/``, with its default settings:
about 3 CPU-minutes in all, most of it the training notebook's million decisions) and writes it
with its outputs, so the figures show where the repository is browsed. Edit the cells here, not
in the notebooks, so they stay reviewable. Each notebook is executed by the tests on a small run.
"""

from __future__ import annotations

import os

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PATH = os.path.join(ROOT, "notebooks", "solo_edge.ipynb")

CHECK_INSTALL = """import os
import pathlib

try:
    import twilight_env
except ImportError:
    raise ImportError("this notebook needs the twilight-env package: pip install \\"twilight-env[study]\\" "
                      "(in a checkout of the repository: pip install -e \\".[study]\\")") from None"""
"""The first lines of every notebook: the installed package, else one line saying how to
install it. Nothing assumes a checkout of the repository."""

CHECKOUT_HELPERS = """


def find_checkout(start=None):
    \"\"\"The repository checkout that the working directory is in (the folder with its
    pyproject.toml, twilight_env/ and results/), or None: the notebook runs outside one too.\"\"\"
    here = pathlib.Path(start or pathlib.Path.cwd()).resolve()
    return next((p for p in [here, *here.parents]
                 if (p / "pyproject.toml").is_file() and (p / "twilight_env").is_dir() and (p / "results").is_dir()), None)


def shown_path(path):
    \"\"\"``path`` relative to the checkout or the working directory when inside one, else as given.\"\"\"
    p = pathlib.Path(path).resolve()
    for base in [b for b in (CHECKOUT, pathlib.Path.cwd().resolve()) if b]:
        if p.is_relative_to(base):
            return str(p.relative_to(base))
    return str(path)


CHECKOUT = find_checkout()"""
"""The study notebook's helpers: ``CHECKOUT`` (the checkout it runs in, or None) for the
project's committed studies in ``results/``."""

CELLS = [
    ("md", """# Solo vs Sun side in 3-player Twilight

The publisher asks players to find out, with fixed teams, whether the solo (Moon, two hands:
its own and the open new-moon hand) or the Sun side of two players has the edge (rules R7.1-R7.6).
`twilight edge` answers it for given agents: every deal of a fixed deal set is played three times,
once with each player's hand as the solo hand, and the deal points of both sides are recorded.

This notebook shows the results of one `twilight edge` run. Which run:

1. the folder in the environment variable `TWILIGHT_EDGE_DIR`, else
2. the newest `out/edge__*` folder (what `twilight edge` writes) in the working directory or
   the repository checkout it is in, else
3. in a checkout, the project's study of the shipped network (`policy:default`) on the held-out
   set `heldout-2`, 18,000 deals (`results/edge_policy_it8_h2`, the README's `policy` row), else
4. a tiny run made here (20 deals, one process, into `out/edge__notebook`): enough to see the
   layout, far too few to answer the question. Run `twilight edge` (about a minute) for a real answer.

It needs only the installed package (`pip install "twilight-env[study]"`); the sections that
show the project's committed studies (`results/`) say so when run outside a checkout."""),
    ("code", CHECK_INSTALL + CHECKOUT_HELPERS + """

import glob
import json

import numpy as np
from IPython.display import Image, Markdown, display

from twilight_env.experiments.edge import solo_edge
from twilight_env.experiments.common import agent_available, markdown_table, mean_ci

folder = os.environ.get("TWILIGHT_EDGE_DIR")
if not folder:
    bases = [pathlib.Path.cwd()] + ([CHECKOUT] if CHECKOUT else [])
    runs = sorted({r for b in bases for r in glob.glob(str(b / "out" / "edge__*" / "edge.json"))}, key=os.path.getmtime)
    folder = os.path.dirname(runs[-1]) if runs else None
if not folder and CHECKOUT and (CHECKOUT / "results" / "edge_policy_it8_h2" / "edge.json").is_file():
    folder = str(CHECKOUT / "results" / "edge_policy_it8_h2")  # the shipped network on heldout-2
if not folder:
    spec = solo_edge.DEFAULT_SPEC if agent_available(solo_edge.DEFAULT_SPEC) else "random"
    folder = solo_edge.run_study([spec], deals=20, seed=0, workers=1,
                                 out=os.path.join("out", "edge__notebook"), progress=False, verbose=False)
doc = solo_edge.load_result(folder)
print(f"edge output: {shown_path(folder)}")
print(f"N = {doc['deals']} deals x 3 plays, seed {doc['seed']}, match target {doc['target']}, "
      f"run time {doc['run_seconds']:.0f} s with {doc['workers']} worker(s)")"""),
    ("md", """## The answer

One line per agent configuration (`heuristic` = the same agent on all three chairs;
`pimc / heuristic` = solo pimc against a Sun side of heuristic). Deal points per deal, mean with
95% confidence interval in brackets."""),
    ("code", """header, rows = solo_edge.table_rows(doc["results"])
display(Markdown(markdown_table(header, rows)))
for r in doc["results"]:
    display(Markdown("- " + r["answer"]))"""),
    ("code", """png = os.path.join(folder, "edge.png")
display(Image(filename=png))"""),
    ("md", """## How to read the intervals

* **Moon − Sun** is the main figure. Each deal is played three times (each player's hand once as
  the solo hand); the three differences are averaged into one number per deal, so the hand luck of
  the solo chair cancels within a deal. The interval is a Student-t 95% interval over the N deals:
  if the whole interval lies above 0 the solo side scores more per deal, below 0 the Sun side does,
  and if it contains 0 this run cannot tell. Its half-width shrinks like 1/√N: four times the deals
  halve it.
* **Moon pts/deal** and **Sun pts/deal**: the same kind of interval for each side's own deal score.
* **P(Moon > Sun) deal**: the share of plays in which the Moon side scored more (ties count for
  neither); Wilson interval over the 3N plays. The three plays of a deal share their cards, so this
  interval is slightly too narrow.
* **P(solo wins) fixed_solo**: matches to the target simulated by drawing played deals at random,
  the same player solo every deal (R7.6). The interval is a percentile bootstrap: the N deals are
  resampled, matches are simulated on each resample, and the middle 95% of the resulting
  probabilities is shown. 0.5 means no edge over a whole match.
* **Rotating**: the publisher's rules, solo passing p0, p2, p1, ... (R7.4). With a fair game each
  player wins about 1/3 of the matches; p0 is solo first, which can matter when the solo has an
  edge."""),
    ("code", """rows = []
for r in doc["results"]:
    moon = np.array(r["moon_points"], dtype=float)   # (N, 3): deal points [deal, play]
    sun = np.array(r["sun_points"], dtype=float)
    diff = (moon - sun).mean(axis=1)                 # one paired difference per deal
    m, lo, hi = mean_ci(diff)
    f = r["figures"]
    rows.append([r["label"], len(diff), f"{m:+.1f}", f"[{lo:+.1f}, {hi:+.1f}]", f"{hi - lo:.1f}",
                 f"{f['diff']['sd_per_deal']:.1f}",
                 " / ".join(f"{x:+.1f}" for x in f["diff_by_play"])])
display(Markdown(markdown_table(["agents", "N", "Moon − Sun", "95% CI", "CI width", "sd per deal",
                                 "by play r = 0 / 1 / 2"], rows)))
sd = max(r["figures"]["diff"]["sd_per_deal"] for r in doc["results"])
print(f"deals needed for a CI half-width of 2 points at this spread: about {int((1.96 * sd / 2) ** 2)}")"""),
    ("md", """## Matches

Under `fixed_solo` the solo plays against the Sun side every deal; under the rotating rules
each player is solo every third deal and is credited with the Sun side's points otherwise."""),
    ("code", """rows = []
for r in doc["results"]:
    fx = r["figures"]["matches"]["fixed_solo"]
    rot = r["figures"]["matches"]["rotating"]
    rows.append([r["label"], f"{fx['p_solo_wins']:.3f} [{fx['ci_low']:.3f}, {fx['ci_high']:.3f}]",
                 f"{fx['mean_deals']:.1f}",
                 " / ".join(f"{p:.3f} [{lo:.3f}, {hi:.3f}]" for p, (lo, hi) in zip(rot["p_win"], rot["p_win_ci"])),
                 " / ".join(f"{t:.0f}" for t in rot["mean_totals"]), f"{rot['mean_deals']:.1f}"])
display(Markdown(markdown_table(["agents", "P(solo wins), fixed_solo", "deals/match",
                                 "rotating P(win) p0 / p1 / p2", "mean final totals", "deals/match"], rows)))"""),
    ("md", """## The `goals_333` variant (R6.2)
A match also ends when exactly one side's total is exactly 333, 666 or 999. No agent of this
package reads the match totals, so the same deals give the figure (runs made before it existed:
`python -m twilight_env.experiments.edge.goals_333 FOLDER`)."""),
    ("code", """rows = []
for r in doc["results"]:
    g = r["figures"]["matches"].get("fixed_solo_goals_333")
    if g is not None:
        rows.append([r["label"], f"{g['p_solo_wins']:.3f} [{g['ci_low']:.3f}, {g['ci_high']:.3f}]",
                     f"{g['mean_deals']:.1f}"])
if rows:
    display(Markdown(markdown_table(["agents", "P(solo wins), fixed_solo, goals_333", "deals/match"], rows)))
else:
    print("this run predates the goals_333 figure: python -m twilight_env.experiments.edge.goals_333", folder)"""),
    ("md", """## The edge against strength
`twilight edge --ladder LADDER` plays the study at every rung of a strength ladder on a held-out
deal set and writes `edge_vs_strength.json`, `.md` and `.png`; `--off-ladder FOLDER` adds agents
that are not rungs (their own table, against the top rung). The folder in the environment
variable `TWILIGHT_EDGE_LADDER_DIR` is shown if set; otherwise the project's own run in
`results/edge_vs_strength/`."""),
    ("code", """from twilight_env.experiments.edge import edge_strength
ladder_dir = os.environ.get("TWILIGHT_EDGE_LADDER_DIR") or (CHECKOUT and str(CHECKOUT / "results" / "edge_vs_strength"))
if ladder_dir:
    res = json.loads(pathlib.Path(ladder_dir, "edge_vs_strength.json").read_text())
    header, rows = edge_strength.table_rows(res)
    display(Markdown(markdown_table(header, rows)))
    display(Markdown(edge_strength.top_two_line(res)))
    if res.get("off_ladder"):  # agents that are not rungs (--off-ladder), against the top rung
        header, rows = edge_strength.off_ladder_rows(res)
        display(Markdown(markdown_table(header, rows)))
    display(Image(filename=os.path.join(ladder_dir, "edge_vs_strength.png")))
else:
    print("not in a checkout of the repository, so no results/edge_vs_strength to show: set TWILIGHT_EDGE_LADDER_DIR "
          "to the folder of a `twilight edge --ladder` run")"""),
    ("md", """## The `three_player_scoring="individual"` variant (R8)
Every seat scores only its own tricks and the new moon's tricks are a fourth score line.
`twilight edge SPEC --scoring individual` writes `individual.json`; agents that play for their
own line: `ismcts:backend=numba,scoring=individual`. Shown: the folders in the environment
variable `TWILIGHT_EDGE_INDIVIDUAL_DIRS` (separated by `os.pathsep`), else those under
`results/individual/`."""),
    ("code", """from twilight_env.experiments.edge import individual_edge
dirs = os.environ.get("TWILIGHT_EDGE_INDIVIDUAL_DIRS")
if dirs:
    dirs = dirs.split(os.pathsep)
else:  # the project's runs, in a checkout
    dirs = sorted(glob.glob(str(CHECKOUT / "results" / "individual" / "*"))) if CHECKOUT else []
results = []
for d in dirs:
    f = pathlib.Path(d, individual_edge.RESULT)
    if f.exists():
        results += json.loads(f.read_text())["results"]
if results:
    header, rows = individual_edge.table_rows(results)
    display(Markdown(markdown_table(header, rows)))
    for r in results:
        print(individual_edge.verdict(r["figures"], r["label"], r["deals"]))
else:
    print("no individual-scoring run found (outside a checkout set TWILIGHT_EDGE_INDIVIDUAL_DIRS): "
          "twilight edge heuristic --scoring individual")"""),
]


SETUP = CHECK_INSTALL + """
import tempfile"""

TRAIN_CELLS = [
    ("md", """# Training an agent by self-play and watching its curve

`twilight train` (Deep Monte-Carlo, DouZero-style: `training/README.md`) trains a Q-network by
self-play on the batch engine. This notebook runs a short training in this process, reads its
TensorBoard scalars back and plots the learning curve, then plays the trained network against
`random` on duplicate deals. Settings from the environment: `TWILIGHT_TRAIN_DECISIONS` (default
1,000,000 self-play decisions: 52 s on one core of a 2-core machine) and
`TWILIGHT_TRAIN_DIR` (default: a temporary folder, removed by the last cell). On the command line the same run is
`twilight train --players 4 --decisions 1000000 --actors 0 --eval-opponents random`."""),
    ("code", SETUP + """

from twilight_env.training.config import TrainConfig
from twilight_env.training.train import summary_table, train

decisions = int(os.environ.get("TWILIGHT_TRAIN_DECISIONS", 1_000_000))
scratch = tempfile.TemporaryDirectory(prefix="twilight_train_")  # removed by the last cell (or when Python exits)
logdir = os.environ.get("TWILIGHT_TRAIN_DIR") or scratch.name
cfg = TrainConfig(exp="notebook", players=4, decisions=decisions, actors=0, logdir=logdir,
                  eval_every=max(decisions // 4, 1), eval_deals=30, eval_opponents=("random",),
                  games_per_actor=128, chunk=2000, progress=False)
out = train(cfg)
run_dir = pathlib.Path(out["run_dir"])
print(summary_table(out))"""),
    ("md", """## The learning curve

The trainer logs `losses/mse` at every learner step and, at every evaluation, the network's
points per deal against each opponent on fixed duplicate deals (`eval/points_vs_random`, with its
95% interval as `eval/ci95_vs_random`). TensorBoard shows the same (`tensorboard --logdir` the
run's parent folder)."""),
    ("code", """import matplotlib.pyplot as plt
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

acc = EventAccumulator(str(run_dir))
acc.Reload()
loss = acc.Scalars("losses/mse")
ev = acc.Scalars("eval/points_vs_random")
ci = {e.step: e.value for e in acc.Scalars("eval/ci95_vs_random")} if "eval/ci95_vs_random" in acc.Tags()["scalars"] else {}
fig, (a, b) = plt.subplots(1, 2, figsize=(10, 3.5))
a.plot([e.step for e in loss], [e.value for e in loss])
a.set_xlabel("self-play decisions"); a.set_ylabel("MSE (return / 360)"); a.set_title("loss")
b.errorbar([e.step for e in ev], [e.value for e in ev], yerr=[ci.get(e.step, 0) for e in ev], fmt="o-", capsize=3)
b.axhline(0, color="grey", lw=0.8)
b.set_xlabel("self-play decisions"); b.set_ylabel("points per deal"); b.set_title("against random")
fig.tight_layout()
print(f"evaluations: {[(e.step, round(e.value, 1)) for e in ev]}")"""),
    ("md", """## Play it

The checkpoint plays as `neural:path=RUN/checkpoint.pt` in every command (`arena`, `edge`,
`ladder`, `play`). Duplicate deals: each deal is played twice with the seats swapped."""),
    ("code", """from twilight_env.cli import main

with tempfile.TemporaryDirectory(prefix="twilight_arena_") as arena_dir:
    main(["arena", f"neural:path={run_dir / 'checkpoint.pt'}", "random", "--players", "4", "--deals", "50",
          "--workers", "1", "--quiet", "--out", arena_dir, "--force"])"""),
    ("md", """To train on: `twilight train --resume RUN_DIR --minutes 30` (the command is printed at the
end of every run; set `TWILIGHT_TRAIN_DIR` to keep the run, else this cell removes its temporary
folder); to start from the shipped network: `twilight train --players 3 --init default`."""),
    ("code", """scratch.cleanup()"""),
]

LADDER_CELLS = [
    ("md", """# Putting your own agent on the strength ladder

An agent is any object with `act(infoset, legal_actions, rng) -> action` (`agents/base.py`; the
information set is what its seat may know, never the true state). Registered under a name with
`twilight_env.agents.base.register`, it plays in every command and study of this process. Here: a simple rule
("play the strongest legal card, else the first legal action") put between `random` and
`heuristic` on the ladder, on the held-out deal set `heldout-1`: does it beat `random`? (In one
run of 100 deals it did not: -4.8 [-21.8, +12.3].) Deals per step from `TWILIGHT_LADDER_DEALS`
(default 100)."""),
    ("code", SETUP + """

from twilight_env.agents.base import register
from twilight_env.rules.cards import NUM_CARDS, STRENGTH


@register("mine")
class StrongestCard:
    \"\"\"Plays its strongest legal card (R4.1 order); requests only when it must.\"\"\"

    stateless = True

    def __init__(self):
        self.name = "mine"

    def act(self, infoset, legal_actions, rng):
        cards = [a for a in legal_actions if a < NUM_CARDS]
        return max(cards, key=lambda c: STRENGTH[c]) if cards else legal_actions[0]"""),
    ("code", """from twilight_env.experiments.ladder import run_ladder

deals = int(os.environ.get("TWILIGHT_LADDER_DEALS", 100))
from IPython.display import Image, Markdown, display
with tempfile.TemporaryDirectory(prefix="twilight_ladder_") as out:  # removed once shown
    folder = run_ladder(["random", "mine", "heuristic"], num_players=3, deals=deals, workers=1, progress=False,
                        verbose=False, out=out, force=True)
    display(Markdown(pathlib.Path(folder, "ladder.md").read_text()))
    display(Image(filename=str(pathlib.Path(folder, "ladder.png"))))"""),
    ("md", """A step **holds** when its interval is above 0. To compare with the project's own agents, add
rungs (`pimc`, `ismcts`, `neural:default`) and deals; the same from a shell needs the agent
importable there (a module that calls `register`), e.g. `twilight ladder random mine heuristic
--players 3` after registering it in a package your shell imports."""),
]

NOTEBOOKS = {"solo_edge.ipynb": CELLS, "train_agent.ipynb": TRAIN_CELLS, "my_agent_on_ladder.ipynb": LADDER_CELLS}
"""Every notebook this script writes, by file name in ``notebooks/``."""


def build(cells=None) -> nbformat.NotebookNode:
    """The notebook object of ``cells`` (default: the study notebook's), outputs empty."""
    cells = CELLS if cells is None else cells
    nb = new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    nb.cells = [new_markdown_cell(src) if kind == "md" else new_code_cell(src) for kind, src in cells]
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{i}"
    return nb


RUN_ENV = ("TWILIGHT_EDGE_DIR", "TWILIGHT_EDGE_LADDER_DIR", "TWILIGHT_EDGE_INDIVIDUAL_DIRS", "TWILIGHT_TRAIN_DIR",
           "TWILIGHT_TRAIN_DECISIONS", "TWILIGHT_LADDER_DEALS")
"""The notebooks' settings from the environment, unset for ``--execute`` so the committed
outputs are those of the defaults (the study notebook then shows ``results/``)."""


def execute(nb: nbformat.NotebookNode, timeout: int = 1800) -> nbformat.NotebookNode:
    """Run ``nb`` in a Python 3 kernel with ``notebooks/`` as its working directory and the
    variables of :data:`RUN_ENV` unset; returns it with its outputs.

    Raises:
        nbclient.exceptions.CellExecutionError: a cell raised (the notebook is not written).
    """
    import nbclient

    saved = {k: os.environ.pop(k) for k in RUN_ENV if k in os.environ}
    try:
        nbclient.NotebookClient(nb, timeout=timeout, kernel_name="python3",
                                resources={"metadata": {"path": os.path.dirname(PATH)}}).execute()
    finally:
        os.environ.update(saved)
    return nb


def main(argv: list[str] | None = None) -> None:
    import argparse

    ap = argparse.ArgumentParser(description="write the notebooks of notebooks/ from the cells in this module")
    ap.add_argument("--execute", action="store_true",
                    help="run each notebook with its defaults and write it with its outputs (about 3 CPU-minutes)")
    ap.add_argument("names", nargs="*", metavar="NAME", help=f"only these notebooks ({', '.join(NOTEBOOKS)}); default all")
    args = ap.parse_args(argv)
    unknown = [n for n in args.names if n not in NOTEBOOKS]
    if unknown:
        ap.error(f"no notebook {unknown[0]!r}; the notebooks: {', '.join(NOTEBOOKS)}")
    os.makedirs(os.path.dirname(PATH), exist_ok=True)
    for name in args.names or NOTEBOOKS:
        nb = build(NOTEBOOKS[name])
        if args.execute:
            nb = execute(nb)
        nbformat.validate(nb)
        path = os.path.join(os.path.dirname(PATH), name)
        nbformat.write(nb, path)
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
