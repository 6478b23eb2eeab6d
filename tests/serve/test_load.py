"""Load of ``twilight serve`` on loopback: 20 concurrent games keep their move latency while a
hostile client sends the requests the server refuses and 40 clients ask for searching
advances (docs/SERVE.md, What the server guards against). Slow (about a minute on 2 cores)
and timing-based: run with ``pytest -m slow``."""

from __future__ import annotations

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from benchmarks import serve_load  # noqa: E402

EXPECTED = {"spec naming a file": 400, "spec naming /proc": 400, "text/plain body": 415, "form body": 415,
            "no content type": 415, "foreign origin": 403, "foreign host": 400, "hint with 10^9 iterations": 400,
            "48 MiB chunked body": 413, "JSON nested 100,000 deep": 400, "replay page of 10^6": 400,
            "watched match to 10^9": 400, "32 KiB of escaped quotes": 400, "4 MiB of escaped quotes": 400}
ATTACK = f"advance of {serve_load.ATTACK_SPEC}"
"""The 40 searching advances: served (200) or refused while the pool is full (429); 0 when the
server closed an idle keep-alive connection while the attacker waited its Retry-After."""


@pytest.mark.slow
def test_20_games_keep_their_p95_with_a_hostile_client():
    server, port = serve_load.start_server(20)
    try:
        res = serve_load.compare(port, games=20, moves=800, seed=0, rounds=2, attackers=40, server_pid=server.pid)
    finally:
        server.terminate()
        server.wait(10)
    print(f"p95 without {res['p95_quiet_ms']:.1f} ms, with the hostile client {res['p95_hostile_ms']:.1f} ms, "
          f"ratio {res['ratio']:.2f}; moves {res['moves']}; hostile answers {res['hostile_answers']}")
    assert not res["errors"], res["errors"][:3]  # no game was refused (store full) or broken
    assert res["answers_5xx"] == 0
    assert res["moves"] == {False: 1600, True: 1600}
    seen = {}
    for key, n in res["hostile_answers"].items():
        name, _, status = key.rpartition(": ")
        if name == ATTACK:
            assert int(status) in (200, 429, 0), key
            continue
        seen[name] = seen.get(name, 0) + n
        # every hostile request was refused as it should be (a reset is possible only for an upload cut short)
        assert int(status) == EXPECTED[name] or (int(status) == 0 and name == "48 MiB chunked body"), key
    assert set(seen) == set(EXPECTED) and min(seen.values()) >= 5  # the hostile client kept at it
    assert res["hostile_answers"].get(f"{ATTACK}: 429", 0) >= 30  # the pool refused what it could not queue
    assert res["ratio"] <= 2.0, res
    m0, m1 = res["memory_kib"]["after_warmup"], res["memory_kib"]["end"]
    assert m1["rss"] - m0["rss"] <= 50 * 1024, res["memory_kib"]
