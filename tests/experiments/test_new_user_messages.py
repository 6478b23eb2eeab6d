"""Messages a new user meets: the files a study wrote, and a file that is not a game record."""

import json

import pytest

from twilight_env.cli import main
from twilight_env.records.game_records import RecordError, validate


def test_edge_with_records_lists_the_records_file_among_its_files(tmp_path, capsys):
    out, recs = tmp_path / "out", tmp_path / "recs"
    assert main(["edge", "random", "--deals", "2", "--workers", "1", "--quiet", "--out", str(out),
                 "--records", str(recs)]) in (0, None)
    printed = capsys.readouterr().out
    files = printed[printed.index("Files:"):]
    assert str(recs / "edge.records.jsonl.gz") in files, files


def test_a_study_result_given_as_a_record_is_called_not_a_game_record(tmp_path):
    not_a_record = {"seed": 0, "deals": 1, "results": []}  # the shape of edge.json
    with pytest.raises(RecordError, match="not a game record.*--records DIR"):
        validate(json.loads(json.dumps(not_a_record)))
