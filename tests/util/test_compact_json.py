"""Result files with per-deal arrays on one line (twilight_env/util/compact_json.py): the same
values in about a third of the bytes, objects still one key a line."""

import json
import math

import pytest

from twilight_env.util.compact_json import dumps, main, rewrite

DOC = {"seed": 3, "specs": ["policy", "heuristic"], "label": "ünïcode",
       "results": [{"moon_points": [[60, 0, 12], [0, 0, 0]], "figures": {"diff": [-2.7, -4.1, -1.4], "n": 8000}},
                   {"moon_points": [], "answer": None, "flag": True}],
       "ratings": [], "empty": {}, "nested": [[[1, 2]], [[3]]], "pair": (1, 2)}


def test_arrays_of_numbers_go_on_one_line_and_the_values_read_back():
    text = dumps(DOC)
    back = json.loads(text)
    assert back == {**DOC, "pair": [1, 2]}
    lines = text.splitlines()
    assert ' "specs": ["policy","heuristic"],' in lines
    assert '   "moon_points": [[60,0,12],[0,0,0]],' in lines
    assert ' "ratings": [],' in lines and ' "empty": {},' in lines
    assert ' "nested": [' in lines  # arrays of arrays of arrays stay one element a line
    assert lines[0] == "{" and lines[-1] == "}"


def test_a_third_of_the_bytes_of_indent_1_for_per_deal_scores():
    rng = range(6000)
    doc = {"results": [{"moon_points": [[(i * 7) % 61, (i * 3) % 37, i % 5] for i in rng],
                        "sun_points": [[(i * 11) % 53, 0, i % 9] for i in rng]}]}
    assert len(dumps(doc)) < len(json.dumps(doc, indent=1)) / 3
    assert json.loads(dumps(doc)) == doc


def test_nan_and_infinity_are_written_as_json_dumps_writes_them():
    text = dumps({"x": [math.nan, math.inf, 1.5]})
    assert "[NaN,Infinity,1.5]" in text
    assert math.isnan(json.loads(text)["x"][0])


def test_rewrite_in_place_and_the_command(tmp_path, capsys):
    f = tmp_path / "edge.json"
    f.write_text(json.dumps(DOC, indent=1), encoding="utf-8")
    before = f.stat().st_size
    assert rewrite(f) == (before, f.stat().st_size) and f.stat().st_size < before
    assert json.loads(f.read_text(encoding="utf-8")) == {**DOC, "pair": [1, 2]}
    assert main([str(f)]) == 0 and "edge.json:" in capsys.readouterr().out
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    assert main([str(bad)]) == 2
    assert "is not JSON" in capsys.readouterr().err and bad.read_text() == "{not json"
    assert main([]) == 2 and "usage:" in capsys.readouterr().err
    with pytest.raises(ValueError, match="is not JSON"):
        rewrite(bad)


def test_write_json_with_arrays_inline_writes_this_form_atomically(tmp_path):
    """The study outputs (edge.json, arena.json, ladder.json, individual.json,
    edge_vs_strength.json) are written so: the same values, arrays of numbers on one line."""
    from twilight_env.util.atomic import write_json

    f = tmp_path / "edge.json"
    write_json(f, DOC, arrays_inline=True)
    assert f.read_text(encoding="utf-8") == dumps(DOC) + "\n"
    assert not list(tmp_path.glob("*.tmp*"))


def test_a_study_writes_its_per_deal_points_on_one_line(tmp_path):
    from twilight_env.experiments.edge import solo_edge

    out = solo_edge.run_study(["random"], deals=3, seed=4, out=str(tmp_path / "a"), boot=5, matches=5, workers=1,
                              progress=False, verbose=False)
    text = (tmp_path / "a" / "edge.json").read_text(encoding="utf-8")
    assert text == dumps(json.loads(text)) + "\n" and str(out) == str(tmp_path / "a")
    assert sum(line.lstrip().startswith('"moon_points": [[') for line in text.splitlines()) == 1
