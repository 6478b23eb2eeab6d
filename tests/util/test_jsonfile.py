"""``twilight_env.util.jsonfile``: damaged JSON is refused in one line that names the source."""

import gzip
import time
import json

import pytest

from twilight_env.util.jsonfile import MAX_DEPTH, JsonFileError, nesting_depth, parse_json, read_json


def test_nesting_depth_ignores_brackets_inside_strings():
    assert nesting_depth('{"a": [1, {"b": "[[[[\\"]]"}]}') == 3
    assert nesting_depth("17") == 0


def test_deep_nesting_is_refused_without_recursion_error():
    deep = "[" * 100_000 + "]" * 100_000
    with pytest.raises(JsonFileError, match=r"the body nests arrays/objects more than 64 levels deep; at most 64"):
        parse_json(deep, "the body")


def test_nesting_up_to_the_limit_is_read():
    ok = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert parse_json(ok, "x") is not None
    with pytest.raises(JsonFileError):
        parse_json("[" + ok + "]", "x")


def test_bom_is_accepted_in_text_and_bytes():
    assert parse_json("\ufeff{\"a\": 1}", "x") == {"a": 1}
    assert parse_json("\ufeff{\"a\": 1}".encode("utf-8"), "x") == {"a": 1}


def test_not_json_and_not_utf8_name_the_source():
    with pytest.raises(JsonFileError, match=r"^my file is not valid JSON: .* line 1, column 2"):
        parse_json("{x", "my file")
    with pytest.raises(JsonFileError, match="is not UTF-8"):
        parse_json(b"\xff\xfe", "my file")


def test_truncated_gzip_is_one_line(tmp_path):
    p = tmp_path / "r.json.gz"
    data = gzip.compress(json.dumps({"a": list(range(5000))}).encode())
    p.write_bytes(data[: len(data) // 2])
    with pytest.raises(JsonFileError, match=r"record file '.*r\.json\.gz' is a truncated gzip file"):
        read_json(p, "record file")
    p.write_bytes(b"not gzip at all")
    with pytest.raises(JsonFileError, match="is not a valid gzip file"):
        read_json(p, "record file")


def test_missing_folder_and_good_file(tmp_path):
    with pytest.raises(JsonFileError, match="does not exist"):
        read_json(tmp_path / "nope.json", "deal file")
    with pytest.raises(JsonFileError, match="is a folder, not a file"):
        read_json(tmp_path, "deal file")
    p = tmp_path / "ok.json.gz"
    p.write_bytes(gzip.compress(b'{"deals": [1, 2]}'))
    assert read_json(p) == {"deals": [1, 2]}


def test_a_huge_integer_is_one_line_naming_the_source():
    """Python refuses to convert integers of more than 4,300 digits; that is one line too."""
    with pytest.raises(JsonFileError, match=r"^the body holds a value that cannot be read \(.*4300"):
        parse_json('{"steps": ' + "9" * 5000 + "}", "the body")


def test_a_device_or_an_oversized_file_is_refused_before_reading(tmp_path):
    with pytest.raises(JsonFileError, match=r"record file '/dev/zero' is not a regular file"):
        read_json("/dev/zero", "record file")
    p = tmp_path / "big.json"
    p.write_text("[" + "1," * 600 + "1]")
    with pytest.raises(JsonFileError, match=r"holds more than 1,000 bytes; no file of this kind"):
        read_json(p, "checkpoint", max_bytes=1000)
    g = tmp_path / "big.json.gz"
    g.write_bytes(gzip.compress(b" " * 5000 + b"[]"))  # small on disk, large inside
    with pytest.raises(JsonFileError, match="holds more than 1,000 bytes uncompressed"):
        read_json(g, "checkpoint", max_bytes=1000)
    assert read_json(g, "checkpoint") == []


def _adversarial(size: int) -> str:
    """65 '[', a '"', then '\\"' repeated to ``size`` characters: a string never closed."""
    return "[" * 65 + '"' + '\\"' * ((size - 66) // 2)


def test_an_unclosed_string_full_of_escaped_quotes_is_refused_at_once():
    """A check that rescans from every unmatched quote took 17 s on these 32 KB."""
    text = _adversarial(32 * 1024)
    t0 = time.perf_counter()
    with pytest.raises(JsonFileError, match="levels deep|not valid JSON"):
        parse_json(text, "the body")
    assert time.perf_counter() - t0 < 0.5


@pytest.mark.parametrize("tail", ["", "\\", "\\\n", '"' * 1001])
def test_the_nesting_check_is_linear_on_unclosed_strings(tail):
    """Doubling the text at most about doubles the time (quadratic: 4x), and 1 MiB stays fast."""
    times = []
    for size in (256 * 1024, 1024 * 1024):
        text = _adversarial(size) + tail
        best = float("inf")
        for _ in range(3):  # the best of 3: other jobs on the machine only ever add time
            t0 = time.perf_counter()
            nesting_depth(text)
            best = min(best, time.perf_counter() - t0)
        times.append(best)
    assert times[1] < 0.5
    assert times[1] < 4 * times[0] + 0.05


def test_counting_can_stop_once_past_a_depth():
    text = "[" * 300_000 + "]" * 300_000
    assert nesting_depth(text) == 300_000
    assert 64 < nesting_depth(text, stop_above=64) <= 65_536 + 64


def test_brackets_after_a_string_that_never_closes_are_hidden_and_json_says_why():
    assert nesting_depth('[["abc\\"]]]]') == 2
    assert nesting_depth('["a\\\\"' + "[" * 5) == 6
    with pytest.raises(JsonFileError, match="not valid JSON: Unterminated string"):
        parse_json('[["abc\\"]]]]', "x")


def test_a_text_over_the_size_limit_is_refused_before_parsing():
    with pytest.raises(JsonFileError, match=r"^the body is 1,001 bytes long; at most 1,000 are accepted$"):
        parse_json(b" " * 999 + b"[]", "the body", max_size=1000)
    assert parse_json(" " * 998 + "[]", "x", max_size=1000) == []


def test_files_with_escaped_quotes_are_read_or_refused_at_once(tmp_path):
    """``twilight replay`` and ``--resume`` read files through ``read_json``: a 32 KB file of
    the hostile form took 6 s (quadratic) with the old nesting check; a valid checkpoint
    whose field holds 16 KB of quotes among more than 64 brackets is read as before."""
    bad = tmp_path / "record.json"
    bad.write_text(_adversarial(32 * 1024))
    good = tmp_path / "checkpoint.json"
    good.write_text(json.dumps({"points": [[i] for i in range(100)], "note": '"' * 16 * 1024}))
    t0 = time.perf_counter()
    with pytest.raises(JsonFileError, match=r"record file '.*record\.json' is not valid JSON"):
        read_json(bad, "record file")
    assert read_json(good, "checkpoint")["note"] == '"' * 16 * 1024
    assert time.perf_counter() - t0 < 0.5


def test_an_unterminated_string_is_said_once_with_its_place():
    # json's own message ends in "starting at" (it appends ": line L column C"): not "at at"
    with pytest.raises(JsonFileError) as e:
        parse_json('["abc', "body")
    assert str(e.value) == "body is not valid JSON: Unterminated string starting at line 1, column 2"
    with pytest.raises(JsonFileError, match=r"^body is not valid JSON: Expecting value at line 1, column 2$"):
        parse_json("[", "body")
