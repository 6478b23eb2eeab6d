"""Progress of the studies' runs (``experiments.common.Progress``): counted in deals, a
time estimate from measured play (not start-up), and lines off a terminal."""

from __future__ import annotations

import io

import pytest

from twilight_env.experiments.common import Progress


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def test_the_estimate_leaves_out_start_up():
    """A run of 3,264 deals whose first block of 32 arrives after 60 s of start-up and every
    later one 0.3 s after the previous: about 30 s left, not the hour start-up suggests."""
    clock, out = Clock(), io.StringIO()
    p = Progress(3264, desc="edge policy", stream=out, tty=False, clock=clock)
    assert p.estimate() == "estimating"
    clock.t = 60.0
    p.update(32)
    assert p.estimate() == "estimating"  # start-up only: nothing measured yet
    for _ in range(20):
        clock.t += 0.3
        p.update(32)
    per = p.seconds_per_deal()
    assert per == pytest.approx(0.3 / 32)
    left = per * (3264 - 21 * 32)
    assert p.estimate() == f"{per:.3g} s/deal, {left:.0f} s left" and 20 < left < 30


def test_off_a_terminal_a_line_every_30_seconds_in_deals():
    clock, out = Clock(), io.StringIO()
    p = Progress(8000, done=2000, desc="edge policy", stream=out, tty=False, clock=clock)
    lines = out.getvalue().splitlines()
    assert lines == ["edge policy: 8000 deals (2000 done before, 6000 to play); a line every 30 s"]
    for _ in range(187):  # 32 deals a second
        clock.t += 1.0
        p.update(32)
    lines = out.getvalue().splitlines()[1:]
    assert len(lines) == 6  # at 30, 60, ..., 180 s
    assert lines[0].startswith("edge policy: 2960/8000 deals (37%), 30 s, 0.0312 s/deal, ")
    clock.t += 0.5
    p.update(16)
    p.close()
    assert out.getvalue().splitlines()[-1] == "edge policy: 8000/8000 deals in 3 min"


def test_quiet_and_terminal_modes_write_no_log_lines():
    out = io.StringIO()
    p = Progress(10, stream=out, tty=False, enabled=False)
    p.update(10)
    p.close()
    assert out.getvalue() == ""
    p = Progress(64, desc="edge policy", stream=out, tty=True)  # a bar (tqdm), counted in deals
    p.update(32)
    assert p.bar.n == 32 and p.bar.total == 64
    p.bar.refresh()
    assert "32/64 deals [00:00, estimating]" in out.getvalue()
    p.close()


def test_edge_counts_deals_not_blocks_of_deals(capsys, monkeypatch):
    """A batched agent plays blocks of deals; progress counts the deals."""
    from twilight_env.experiments.edge import solo_edge
    from twilight_env.records.dealsets import deal_set

    monkeypatch.setattr(solo_edge, "LOCKSTEP_BLOCK", 4)
    deals, _ = deal_set(10, 0, 3)
    solo_edge.play_config(deals, "policy", "policy", 0, 0, workers=1, done={0: ([0, 0, 0], [0, 0, 0])})
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "edge policy: 10 deals (1 done before, 9 to play); a line every 30 s"
    assert err[-1].startswith("edge policy: 10/10 deals in ")


def test_arena_counts_deals_of_blocks_and_single_deals(tmp_path, capsys):
    from twilight_env.experiments.arena import play_arena
    from twilight_env.records.dealsets import deal_set

    deals, _ = deal_set(6, 0, 4)
    play_arena(["policy", "random", "heuristic"], deals, 4, 0, workers=1)  # a block pairing and single deals
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("arena, 3 pairings x 6 deals: 18 deals (18 to play)")  # the count is deals x pairings
    assert err[-1].startswith("arena, 3 pairings x 6 deals: 18/18 deals in ")



def test_run_tasks_times_deals_after_start_up(monkeypatch):
    """``timing`` gets seconds per deal measured from the first results on: the first
    task's start-up (here 0.5 s) is not counted as play."""
    import time

    from twilight_env.experiments import common

    monkeypatch.setattr(common, "PROGRESS_WARMUP_S", 0.0)
    timing = {}
    common.run_tasks(_slow_start, list(range(6)), workers=1, progress=False, timing=timing,
                     units=lambda t: 2)  # two deals a task
    per = timing["seconds_per_deal"]
    assert 0.05 / 2 * 0.8 <= per < 0.2  # 0.05 s a task of 2 deals, not (0.5 + 6 x 0.05) / 12
    short = {}
    common.run_tasks(_slow_start, [0], workers=1, progress=False, timing=short)
    assert short == {"seconds_per_deal": None}  # one result: nothing measured after start-up


def _slow_start(task):
    import time

    time.sleep(0.5 if task == 0 else 0.05)
    return task


def test_edge_ladder_projects_hours_from_play_not_start_up():
    """A rung of 20 deals that took 22 s, nearly all start-up, at 0.01 s per deal after it:
    the projection to the target half-width uses 0.01 s per deal (it used 22 / 20 s, an hour
    for 3,264 deals); a run too short to time says so; an older run without the figure
    uses its run time."""
    from twilight_env.experiments.edge import edge_strength as es

    def doc(**r):
        return {"deals": 20, "run_seconds": 22.0, "workers": 1, "results": [{"label": "policy", **r}]}

    hw = 2.0 * (3264 / 20) ** 0.5  # the half-width that needs 3,264 deals
    row = {"half_width": hw}
    timed = es.projection(hw, 20, es.run_seconds(doc(seconds_per_deal=0.01)))
    assert timed["deals_needed"] == 3264 and timed["hours_here"] == pytest.approx(3264 * 0.01 / 3600)
    untimed = es.projection(hw, 20, es.run_seconds(doc(seconds_per_deal=None)))
    assert untimed["hours_here"] is None and es._need(dict(row, projection=untimed)) == "3264 (run too short to time)"
    old = es.projection(hw, 20, es.run_seconds(doc()))
    assert old["hours_here"] == pytest.approx(22.0 / 20 * 3264 / 3600)


def test_an_edge_run_records_its_time_per_deal(tmp_path):
    from twilight_env.experiments.edge import solo_edge

    out = solo_edge.run_study(["random"], deals=3, seed=0, workers=1, boot=5, matches=5, out=str(tmp_path / "e"),
                              progress=False, verbose=False)
    r = solo_edge.load_result(out)["results"][0]
    assert "seconds_per_deal" in r and (r["seconds_per_deal"] is None or r["seconds_per_deal"] > 0)
