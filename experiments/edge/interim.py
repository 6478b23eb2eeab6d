"""The figures of an unfinished ``twilight edge`` run so far: ``twilight edge --status FOLDER``.

A long run (``heldout-2`` to 18,000 deals, days of play) keeps its finished deals in its
progress file (:class:`~twilight_env.experiments.edge.solo_edge.Checkpoint`); this reads
that file (every check of ``--resume`` made, nothing played) and gives, per configuration,
Moon − Sun over the deals finished so far with its 95% interval and the solo's share of
outscoring plays (:func:`~twilight_env.experiments.edge.solo_edge.deal_figures`, the figures
of ``edge.md``), the half-width and the play time so far. The figures are **interim**: the
run's own figures are those of its ``edge.json`` when it finishes. Which deals have
finished does not depend on their outcomes (deals are played in index order, blocks of them
side by side with several workers), so the finished deals are a fair sample of the run's.
"""

from __future__ import annotations

import os

from twilight_env.experiments.common import fmt_ci
from twilight_env.experiments.edge.core import CHECKPOINT, RESULT, config_key, is_individual_run
from twilight_env.experiments.edge.solo_edge import Checkpoint, deal_figures, deal_points


def interim_figures(folder: str) -> list[dict]:
    """Per configuration of the unfinished team-scoring run in ``folder``: ``label`` (its
    specs), ``done`` and ``deals`` (finished and in all), ``figures`` (``deal_figures`` over
    the finished deals: Moon − Sun per deal in deal points, mean and 95% interval, or None
    with fewer than 2), ``play_seconds``.

    Raises:
        ValueError: no progress file in ``folder`` (a finished run: its ``edge.md`` holds the
            figures), an individual-scoring run, or a damaged file (as ``--resume`` says).
    """
    if not os.path.isdir(folder):
        what = "is a file, not a folder" if os.path.exists(folder) else "does not exist"
        raise ValueError(f"{folder!r} {what} (give the output folder of an unfinished twilight edge run)")
    if os.path.isdir(os.path.join(folder, "cells")):
        raise ValueError(f"{folder!r} holds a cross-play matrix: --status reads one edge run, e.g. a cell "
                         f"{os.path.join(folder, 'cells', 'NN-MM_SOLO__SUN')!r}")
    if is_individual_run(folder):
        raise ValueError(f"{folder!r} holds an individual-scoring run; --status reads team-scoring runs")
    if not os.path.isfile(os.path.join(folder, CHECKPOINT)):
        if os.path.isfile(os.path.join(folder, RESULT)):
            raise ValueError(f"the run in {folder!r} has finished: its figures are in edge.md / edge.json")
        raise ValueError(f"no edge run in {folder!r} (no {CHECKPOINT})")
    ckpt = Checkpoint.load(folder)
    out = []
    for solo, sun in ckpt.settings["configs"]:
        key = config_key(solo, sun)
        done = ckpt.finished(key)
        order = sorted(done)
        moon, sun_pts = deal_points(done, order)
        out.append({"label": solo if solo == sun else f"{solo} / {sun}", "done": len(order),
                    "deals": len(ckpt.deals), "figures": deal_figures(moon, sun_pts) if len(order) >= 2 else None,
                    "play_seconds": ckpt.play_seconds(key)})
    return out


def interim_row(folder: str) -> dict:
    """The unfinished one-configuration run in ``folder`` as ``twilight edge --compare`` pairs
    it: ``spec`` (its label, marked as under way with its count of deals), ``label`` (its label
    alone, the spec of a finished run's row), ``interim`` (True), ``seed``, ``source``
    (its settings' ``deals_source``) and ``diff_per_deal``, Moon − Sun of each of its first
    ``n`` deals in deal points (the mean over the deal's 3 plays), ``n`` the longest run of
    finished deals from deal 0 (deals finish in index order with one worker; with several, a
    block may finish before the one ahead of it).

    Raises:
        ValueError: as :func:`interim_figures`, a run of several configurations, or fewer
            than 2 deals finished from deal 0.
    """
    figures = interim_figures(folder)  # every check of --status
    ckpt = Checkpoint.load(folder)
    if len(ckpt.settings["configs"]) != 1:
        raise ValueError(f"--compare {folder!r} holds {len(figures)} configurations "
                         f"({', '.join(f['label'] for f in figures)}); it compares runs of one each")
    done = ckpt.finished(config_key(*ckpt.settings["configs"][0]))
    n = 0
    while n in done:
        n += 1
    if n < 2:
        raise ValueError(f"--compare {folder!r}: the unfinished run has {n} deal(s) finished from deal 0; "
                         "pairing needs at least 2")
    moon, sun = deal_points(done, range(n))
    return {"spec": f"{figures[0]['label']} (under way: its first {n:,} of {len(ckpt.deals):,} deals)",
            "label": figures[0]["label"], "interim": True,
            "seed": int(ckpt.settings["seed"]), "source": ckpt.settings.get("deals_source") or {},
            "diff_per_deal": (moon - sun).mean(axis=1).tolist()}


def interim_lines(folder: str) -> list[str]:
    """The lines ``twilight edge --status FOLDER`` prints (:func:`interim_figures`)."""
    lines = [f"interim figures of the unfinished run in {folder} (its deals finished so far; the run's own "
             "figures are in edge.md when it finishes):"]
    for r in interim_figures(folder):
        f = r["figures"]
        head = f"- {r['label']}: {r['done']:,} of {r['deals']:,} deals, {r['play_seconds']:,.0f} s of play"
        if f is None:
            lines.append(head + "; fewer than 2 deals finished, no figure yet")
            continue
        d, p = f["diff"], f["p_moon_outscores"]
        lines.append(f"{head}; Moon − Sun {fmt_ci(d['mean'], d['ci_low'], d['ci_high'], signed=True)} per deal "
                     f"(half-width {(d['ci_high'] - d['ci_low']) / 2:.1f}); the solo outscores the Sun side in "
                     f"{p['p']:.3f} of the plays")
    return lines


__all__ = ["interim_figures", "interim_lines", "interim_row"]
