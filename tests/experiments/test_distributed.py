"""``--ray``: arena and edge on a real local Ray cluster (2 CPUs) give per-deal points
identical to the local runner, survive a killed worker process without losing or
double-counting a deal, and resume across runners."""

import json

import pytest

import twilight_env.experiments.edge.solo_edge as edge
from twilight_env.experiments.common import run_tasks
from twilight_env.util.distributed import block_size, check_address, ray_runner, run_tasks_ray
from twilight_env.cli import main



@pytest.mark.parametrize("good", ["auto", "local", "127.0.0.1:6379", "ray://head.example:10001", " auto "])
def test_check_address_accepts(good):
    assert check_address(good) == good.strip()


@pytest.mark.parametrize("bad", ["", "  ", "head", "head:", ":6379", "head:port", "head:70000", "ray://", 5])
def test_check_address_refuses_with_the_allowed_forms(bad):
    with pytest.raises(ValueError, match="auto.*local.*HOST:PORT"):
        check_address(bad)


def test_block_size_bounds():
    assert block_size(1, 2) == 1
    assert block_size(80, 2) == 10
    assert block_size(10**6, 2) == 16
    assert block_size(5, 0) == 2


def test_bad_ray_address_is_a_clear_cli_error(capsys):
    assert main(["arena", "random", "heuristic", "--deals", "2", "--ray", "nowhere", "--quiet"]) == 2
    assert "--ray takes 'auto'" in capsys.readouterr().err


def _edge_points(folder):
    doc = json.loads((folder / "edge.json").read_text())
    return [(r["label"], r["moon_points"], r["sun_points"], r["figures"]) for r in doc["results"]], doc


SMALL = dict(boot=20, matches=50, progress=False, verbose=False)


def test_edge_on_ray_equals_local(ray_cluster, tmp_path):
    a, b = tmp_path / "local", tmp_path / "ray"
    edge.run_study(["heuristic"], deals=40, seed=5, out=str(a), workers=2, **SMALL)
    edge.run_study(["heuristic"], deals=40, seed=5, out=str(b), workers=2, ray="auto", **SMALL)
    pa, da = _edge_points(a)
    pb, db = _edge_points(b)
    assert pa == pb
    assert (da["runner"], db["runner"]) == ("local", "ray:auto")
    assert "s on ray:auto." in (b / "edge.md").read_text()
    assert "s with 2 worker(s)." in (a / "edge.md").read_text()


def test_arena_cli_on_ray_equals_local(ray_cluster, tmp_path, capsys):
    args = ["arena", "random", "heuristic", "--players", "3", "--deals", "12", "--seed", "2", "--quiet"]
    assert main(args + ["--out", str(tmp_path / "l")]) == 0
    assert main(args + ["--out", str(tmp_path / "r"), "--ray"]) == 0
    la = json.loads((tmp_path / "l" / "arena.json").read_text())
    ra = json.loads((tmp_path / "r" / "arena.json").read_text())
    assert la["results"] == ra["results"]
    assert ra["runner"] == "ray:auto"


def test_results_come_in_task_order_with_on_result(ray_cluster):
    tasks = [(d, edge.rotated_deal(deal, 0), "random", "random", 1, 0)
             for d, deal in enumerate(_deals(30))]
    seen = []
    with ray_runner("auto"):
        out = run_tasks(edge._play_edge_deal, tasks, workers=2, progress=False, on_result=seen.append)
    assert [r[0] for r in out] == list(range(30))
    assert seen == out


def _deals(n, seed=11):
    from twilight_env.records.dealsets import deal_set

    return deal_set(n, seed, 3, None, None)[0]


def test_a_killed_worker_loses_nothing_and_counts_nothing_twice(ray_cluster, process_killer):
    deals = _deals(400, seed=21)
    tasks = [(d, deal, "heuristic", "heuristic", 7, 0) for d, deal in enumerate(deals)]
    expected = [edge._play_edge_deal(t) for t in tasks]
    for _attempt in range(3):  # the worker must be caught mid-block; retry the run if it was not
        seen = []
        with process_killer("ray::_run_block") as killer:
            out = run_tasks_ray(edge._play_edge_deal, tasks, "auto", on_result=seen.append, block=8)
        if killer.killed:
            break
    assert killer.killed, "no Ray worker was caught running a block"
    assert out == expected  # every deal once, in order, with the same points
    assert seen == expected
    assert sorted(r[0] for r in out) == list(range(400))


def test_edge_resumes_across_runners(ray_cluster, tmp_path, monkeypatch):
    """Interrupted locally, finished on Ray; interrupted on Ray, finished locally."""
    ref = tmp_path / "ref"
    edge.run_study(["random", "heuristic"], deals=20, seed=9, out=str(ref), workers=1, **SMALL)
    expected, _ = _edge_points(ref)
    real = edge.Checkpoint.record
    for first, second in (("local", "auto"), ("auto", "local")):
        folder = tmp_path / f"{first}_then_{second}"
        calls = []

        def record(self, *a, **k):
            real(self, *a, **k)
            calls.append(1)
            if len(calls) == 25:  # config 1 done, config 2 part done
                raise KeyboardInterrupt

        monkeypatch.setattr(edge.Checkpoint, "record", record)
        with pytest.raises(KeyboardInterrupt):
            edge.run_study(["random", "heuristic"], deals=20, seed=9, out=str(folder), workers=1,
                           ray=None if first == "local" else first, **SMALL)
        monkeypatch.setattr(edge.Checkpoint, "record", real)
        assert sum(len(v) for v in edge.Checkpoint.load(str(folder)).done.values()) >= 25
        edge.run_study(resume=str(folder), workers=1, progress=False, verbose=False,
                       ray=None if second == "local" else second)
        got, doc = _edge_points(folder)
        assert got == expected
        assert doc["resumed"] is True


def test_individual_scoring_on_ray_equals_local(ray_cluster, tmp_path):
    """``--scoring individual`` (R8) on Ray: the same plays and figures as local processes."""
    from twilight_env.experiments.edge import individual_edge

    a, b = tmp_path / "local", tmp_path / "ray"
    individual_edge.run_study(["heuristic"], deals=20, seed=5, out=str(a), workers=1, **SMALL)
    individual_edge.run_study(["heuristic"], deals=20, seed=5, out=str(b), workers=1, ray="auto", **SMALL)
    da, db = (json.loads((f / individual_edge.RESULT).read_text()) for f in (a, b))
    assert [r["plays"] for r in da["results"]] == [r["plays"] for r in db["results"]]
    assert [r["figures"] for r in da["results"]] == [r["figures"] for r in db["results"]]
    assert (da["runner"], db["runner"]) == ("local", "ray:auto")


@pytest.mark.parametrize("argv", [
    ["arena", "random", "heuristic", "--deals", "2", "--quiet"],
    ["edge", "random", "--deals", "4", "--quiet"],
    ["edge", "random", "--deals", "4", "--scoring", "individual", "--quiet"],
    ["ladder", "random", "heuristic", "--deals", "4", "--quiet"],
])
@pytest.mark.parametrize("address", ["nowhere", "127.0.0.1:1"])
def test_a_refused_ray_address_makes_no_folder(tmp_path, monkeypatch, capsys, argv, address):
    """A malformed address, or one where no cluster answers, is refused before the run makes
    its output folder (``out/...`` in the working directory) or plays anything."""
    import twilight_env.util.distributed as dist

    def no_cluster(addr):
        raise ValueError(f"--ray {addr}: no Ray cluster answers there (test)")
    monkeypatch.setattr(dist, "connect", no_cluster)  # no 30 s connection timeout in the test
    monkeypatch.chdir(tmp_path)
    assert main([*argv, "--ray", address]) == 2
    err = capsys.readouterr().err
    assert "--ray" in err and len(err.strip().splitlines()) == 1, err
    assert list(tmp_path.iterdir()) == []
