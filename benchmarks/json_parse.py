"""Time of :func:`twilight_env.util.jsonfile.parse_json` against the size of the text, honest and hostile.

Every reader of the project's JSON (the server's request bodies, ``twilight replay``,
``--resume`` checkpoints, deal files) goes through ``parse_json``; its time must grow
linearly with the text on every input. For each size from 1 KiB to 4 MiB (the server's
body limit), doubling, this prints the best of ``--repeat`` times (ms) of

- ``record``: an honest match record of whole deals of random play, at most that size
  (at least one deal, about 7 KiB; its size is in the last column);
- ``escaped``: 65 ``[``, a ``"``, then ``\\"`` repeated (a string never closed; a check
  that rescans from every unmatched quote is quadratic on it);
- ``quotes``: 65 ``[`` then ``"`` repeated (strings open and close at every character);
- ``flat``: ``[[],[],...]`` (one bracket in two characters: the most work for the
  nesting check on a text that is valid JSON);
- ``deep``: ``[`` repeated (refused as too deep).

and the ratio of the time at each size to the time at half that size (linear: about 2;
quadratic: about 4). ``--old`` also times the reader of revision ``ba15a97^`` on the
``escaped`` body up to ``--old-max`` bytes, for comparison.

    python benchmarks/json_parse.py [--repeat 3] [--max-kib 4096]
"""

from __future__ import annotations

import argparse
import json
import time

from twilight_env.util.jsonfile import parse_json


def record_text(size: int) -> str:
    """A match record of random play of at least ``size`` characters, as JSON text (a
    target out of reach, so the match goes on until the record is that large)."""
    import numpy as np

    from twilight_env.records import game_records as records
    from twilight_env.rules.engine import Config, Match

    config = Config(num_players=4, target=10**7)
    rng = np.random.default_rng(0)
    m = Match(config, rng, dealer=0)
    deals: list[dict] = []
    chars = 0
    while chars < size:
        before = list(m.totals)
        st = m.state
        actions = []
        while not st.done:
            legal = st.legal_actions()
            a = legal[int(rng.integers(len(legal)))]
            st.apply(a)
            actions.append(a)
        deals.append(records.deal_record(st, actions, config=config, dealer=m.dealer, scores=before,
                                         agents=["random"] * 4, seed=0))
        chars += len(json.dumps(deals[-1]))
        m.finish_deal()
        m.next_deal(rng)
    return json.dumps(records.match_record(deals, config=config, agents=["random"] * 4, seed=0))


def bodies(size: int, honest: str) -> dict[str, str]:
    return {
        "record": _record_of(size, honest),
        "escaped": "[" * 65 + '"' + '\\"' * ((size - 66) // 2),
        "quotes": "[" * 65 + '"' * (size - 65),
        "flat": "[" + "[]," * ((size - 4) // 3) + "[]]",
        "deep": "[" * size,
    }


def _record_of(size: int, honest: str) -> str:
    """The honest record cut to whole deals near ``size`` (still valid JSON)."""
    doc = json.loads(honest)
    lo, hi = 1, len(doc["deals"])
    while lo < hi:  # most deals whose record fits in `size`
        mid = (lo + hi + 1) // 2
        if len(json.dumps(dict(doc, deals=doc["deals"][:mid]))) <= size:
            lo = mid
        else:
            hi = mid - 1
    return json.dumps(dict(doc, deals=doc["deals"][:lo]))


def best_time(fn, text: str, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        try:
            fn(text, "the body")
        except ValueError:  # JsonFileError (of this reader or of --old's)
            pass
        best = min(best, time.perf_counter() - t0)
    return best


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeat", type=int, default=3, help="times per cell, the best is shown (default 3)")
    p.add_argument("--max-kib", type=int, default=4096, help="largest size in KiB (default 4096)")
    p.add_argument("--old", action="store_true", help="also time the previous reader on the escaped body")
    p.add_argument("--old-max", type=int, default=32768, help="largest escaped body for --old (bytes)")
    args = p.parse_args(argv)
    if args.repeat < 1 or args.max_kib < 1:
        p.error("--repeat and --max-kib must be >= 1")
    sizes = []
    s = 1024
    while s <= args.max_kib * 1024:
        sizes.append(s)
        s *= 2
    honest = record_text(sizes[-1])
    kinds = list(bodies(1024, honest))
    print("parse_json time (ms, best of %d) by body size; (x) = time / time at half the size" % args.repeat)
    print(f"{'size':>9} " + " ".join(f"{k:>17}" for k in kinds) + f"{'record KiB':>12}")
    prev: dict[str, float] = {}
    for size in sizes:
        row = []
        texts = bodies(size, honest)
        for kind, text in texts.items():
            t = best_time(parse_json, text, args.repeat)
            ratio = f"({t / prev[kind]:.1f})" if kind in prev and prev[kind] > 0 else ""
            row.append(f"{t * 1000:10.3f} {ratio:>6}")
            prev[kind] = t
        print(f"{size // 1024:>6} KiB " + " ".join(f"{c:>17}" for c in row)
              + f"{len(texts['record']) / 1024:>12.1f}", flush=True)
    if args.old:
        import subprocess
        import sys
        import types

        src = subprocess.run(["git", "show", "ba15a97^:twilight_env/util/jsonfile.py"], capture_output=True,
                             text=True, check=True).stdout
        old = types.ModuleType("old_jsonfile")
        exec(compile(src, "old_jsonfile.py", "exec"), old.__dict__)
        print("the previous reader on the escaped body:")
        size = 1024
        last = None
        while size <= args.old_max:
            t = best_time(old.parse_json, bodies(size, honest)["escaped"], 1)
            print(f"{size // 1024:>6} KiB {t * 1000:12.1f} ms" + (f" ({t / last:.1f})" if last else ""), flush=True)
            last = t
            size *= 2
        del sys
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
