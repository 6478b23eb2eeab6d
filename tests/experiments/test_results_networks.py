"""Every study in ``results/`` that played an expert-iteration network other than today's
says which network it played, so that a folder whose files name the agent ``policy`` (or
``exit:default``, ``guided:default``) is not taken for today's ``policy:default``: its
folder's name carries the iteration (``_it5``), or a README.md in it or its parent
names the network.

A run played today's network when its saved digest of the shipped weights
(``weights`` in ``edge.json``, :func:`twilight_env.experiments.common.shipped_weights_digest`)
holds today's ``policy_3p.npz``; a run saved before runs kept a digest is taken as an
earlier network's."""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import pytest

from twilight_env.agents.base import declaration, parse_spec
from twilight_env.experiments.common import shipped_weights_digest

RESULTS = Path(__file__).resolve().parents[2] / "results"


def _plays_an_exit_network(spec: str) -> bool:
    """Whether a spec plays the shipped expert-iteration network (``policy``, ``guided``,
    ``exit``, ``exit-search`` on their default weights, or ``respond`` against one)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        name, options = parse_spec(spec)
    if name == "respond":
        return _plays_an_exit_network(str(options.get("target", "exit:default")))
    return declaration(name).family == "exit" and options.get("path", "default") == "default"


def unlabelled_runs(results: Path, today_policy: str) -> list[str]:
    """Run folders under ``results`` that played an earlier shipped expert-iteration network
    and say nowhere which one (no ``_itN`` in the folder's name, no README.md beside it or
    in its parent folder that names the network)."""
    out = []
    for path in sorted(results.rglob("*.json")):
        if path.name not in ("edge.json", "individual.json"):
            continue
        doc = json.loads(path.read_text())
        specs = {s for config in doc.get("configs", []) for s in config.values()}
        if not any(_plays_an_exit_network(s) for s in specs):
            continue
        if (doc.get("weights") or {}).get("policy_3p.npz") == today_policy:
            continue  # today's network
        folder = path.parent
        readmes = [f / "README.md" for f in (folder, folder.parent) if (f / "README.md").is_file() and f != results]
        labelled = re.search(r"_it\d+", folder.name) or any(
            re.search(r"iteration-\d+ network|network then shipped|iteration \d+\b", r.read_text()) for r in readmes)
        if not labelled:
            out.append(str(path.parent.relative_to(results)))
    return out


def test_every_run_of_an_earlier_network_says_which_network_it_played():
    today = shipped_weights_digest(["policy"])["policy_3p.npz"]
    assert unlabelled_runs(RESULTS, today) == []


def test_the_check_finds_an_unlabelled_run(tmp_path):
    today = "a" * 64
    for name, weights in (("edge_policy_h2", None), ("edge_policy_it5_h2", None), ("edge_now", {"policy_3p.npz": today}),
                          ("edge_heuristic", None)):
        (tmp_path / name).mkdir()
        spec = "heuristic" if name == "edge_heuristic" else "policy"
        doc = {"configs": [{"solo": spec, "sun": spec}], **({"weights": weights} if weights else {})}
        (tmp_path / name / "edge.json").write_text(json.dumps(doc))
    assert unlabelled_runs(tmp_path, today) == ["edge_policy_h2"]
    (tmp_path / "edge_policy_h2" / "README.md").write_text("# The edge at the iteration-3 network\n")
    assert unlabelled_runs(tmp_path, today) == []


@pytest.mark.parametrize("spec,plays", [("policy", True), ("guided:default", True), ("exit:default", True),
                                        ("policy:runs/x.npz", False), ("respond:target=policy", True),
                                        ("neural:default", False), ("ismcts", False)])
def test_which_specs_play_the_shipped_network(spec, plays):
    assert _plays_an_exit_network(spec) == plays
