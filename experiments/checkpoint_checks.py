"""Checks of what a resumable run's checkpoint holds, made before anything is played:
field types and bounds, possible scores (R5), the deal source and deal file, the shipped
weights' digests, and the content digest of the file itself. :mod:`twilight_env.experiments.common`
re-exports these names and its :class:`~twilight_env.experiments.common.RunCheckpoint` uses them.
"""

from __future__ import annotations

import json
import math
from typing import Iterable

from twilight_env.agents.base import reads_shipped_weights
from twilight_env.util.checks import check_int
from twilight_env.util.jsonfile import JsonFileError, read_json

MAX_DEAL_SCORE = 360
"""Highest deal score of one side or seat (R5.3: at most 60 souls × multiplier 6)."""


def check_seconds(value, field: str) -> float:
    """``float(value)`` if it is a finite number >= 0 (a duration in seconds).

    Raises:
        ValueError: naming ``field`` and the allowed range.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise ValueError(f"{field} must be a finite number of seconds >= 0, got {value!r}")
    return float(value)


def check_keys(obj, field: str, required: Iterable[str], optional: Iterable[str] = ()) -> dict:
    """``obj`` if it is a dict holding every ``required`` key and no key outside
    ``required`` and ``optional``.

    Raises:
        ValueError: not an object, a missing key or an unknown key (naming them and the
            keys allowed).
    """
    required, optional = list(required), list(optional)
    if not isinstance(obj, dict):
        raise ValueError(f"{field} must be an object, got {type(obj).__name__}")
    missing = [k for k in required if k not in obj]
    if missing:
        raise ValueError(f"{field} lacks {', '.join(map(repr, missing))}")
    unknown = sorted(str(k) for k in obj if k not in required and k not in optional)
    if unknown:
        raise ValueError(f"{field} holds unknown key(s) {', '.join(map(repr, unknown))}; allowed: "
                         f"{', '.join(required + optional)}")
    return obj


_SCORE_PAIRS: frozenset | None = None


def possible_score_pair(a, b) -> bool:
    """Whether two sides' deal scores ``(a, b)`` can come out of one deal (R5): ``a = s·m``
    and ``b = t·n`` with souls ``s + t <= 60`` and multipliers ``m, n`` in 0..6.

    A necessary condition, so it never refuses a real deal's scores: 10^6, 61 (a prime
    above 60) or two scores of 360 are refused."""
    global _SCORE_PAIRS
    if _SCORE_PAIRS is None:
        _SCORE_PAIRS = frozenset((s * m, t * n) for s in range(61) for t in range(61 - s)
                                 for m in range(7) for n in range(7))
    return (a, b) in _SCORE_PAIRS


_MARGINS: frozenset | None = None


def possible_margin(x) -> bool:
    """Whether ``x`` can be one side's deal score minus the other's in one deal (the
    difference of a :func:`possible_score_pair`)."""
    global _MARGINS
    if _MARGINS is None:
        possible_score_pair(0, 0)
        _MARGINS = frozenset(a - b for a, b in _SCORE_PAIRS)
    return not isinstance(x, bool) and isinstance(x, int) and x in _MARGINS


def possible_deal_score(x) -> bool:
    """Whether ``x`` can be one side's or one seat's deal score (R5: souls 0..60 × multiplier 0..6)."""
    return possible_score_pair(x, 0)


def check_score_pair(pair, field: str) -> list[int]:
    """``[a, b]``, two deal scores that one deal can give (:func:`possible_score_pair`).

    Raises:
        ValueError: not two ints, or scores no deal can produce (naming ``field`` and R5).
    """
    if (not isinstance(pair, (list, tuple)) or len(pair) != 2
            or any(isinstance(x, bool) or not isinstance(x, int) for x in pair)):
        raise ValueError(f"{field} must be two integer deal scores, got {pair!r}")
    if not possible_score_pair(*pair):
        raise ValueError(f"{field} = {list(pair)!r} is not a pair of deal scores one deal can give (R5: each "
                         f"0..{MAX_DEAL_SCORE}, souls × multiplier with at most 60 souls in all and multipliers 0..6)")
    return list(pair)


def check_deal_source(meta, field: str, num_players: int, deals: list, run_seed: int | None = None) -> dict:
    """Check a run's ``deals_source`` (:func:`twilight_env.records.dealsets.deal_set`'s meta)
    against its settings and deals.

    The source must be ``"seed"`` or ``"file"`` for ``num_players`` players; deals drawn
    from a seed must be exactly the first ``len(deals)`` deals of that seed (a deal list
    edited by hand is refused), and that seed must be the run's ``run_seed`` when given (a
    run on drawn deals uses the seed it drew them with). Deals from a file are checked by
    :func:`check_deal_file` or the file's digest (:meth:`RunCheckpoint.load`).

    Raises:
        ValueError: naming ``field`` and what is allowed.
    """
    from twilight_env.records.dealsets import generate_deals

    if not isinstance(meta, dict):
        raise ValueError(f"{field} must be an object, got {type(meta).__name__}")
    source = meta.get("source")
    if source not in ("seed", "file"):
        raise ValueError(f"{field} 'source' must be 'seed' or 'file', got {source!r}")
    if meta.get("num_players", num_players) is not None and meta.get("num_players", num_players) != num_players:
        raise ValueError(f"{field} 'num_players' is {meta.get('num_players')!r}, but the run plays {num_players} "
                         "players; were the settings edited?")
    seed = meta.get("seed")
    if seed is not None:
        check_int(seed, f"{field} 'seed'", 0)
    if source == "seed":
        check_int(seed, f"{field} 'seed'", 0)
        if run_seed is not None and run_seed != seed:
            raise ValueError(f"settings 'seed' is {run_seed!r}, but its deals were drawn with seed {seed} ({field}); "
                             "a run on drawn deals uses their seed; were the settings edited?")
        if [[list(h) for h in d] for d in deals] != generate_deals(len(deals), seed):
            raise ValueError(f"its deals are not the first {len(deals)} deals of seed {seed} ({field} says they "
                             "were drawn from that seed); were the deals edited?")
    return meta


NAMED_PREFIX = "file:"
"""Key prefix, in a run's weights digest, of a weights file an agent names by path."""

RUN_FOLDER_FILES = ("policy.npz", "avg_policy.npz")
"""What an agent given a run folder reads there (``mmd:RUN``, ``nfsp:RUN``)."""


def named_weight_files(spec: str) -> list[str]:
    """The weights files an agent spec names by path: each option declared ``holds="path"``
    whose value names a file or folder (:meth:`~twilight_env.agents.declaration.Option.names_path`;
    a run folder: the file of :data:`RUN_FOLDER_FILES` in it), and those of the specs it
    holds (``holds="spec"``: a ``respond`` agent's target and model); not the shipped ones
    (``default``, ``model``).

    Raises:
        ValueError: a malformed spec or an unknown agent (as :func:`~twilight_env.agents.base.parse_spec`).
    """
    from pathlib import Path

    from twilight_env.agents.base import declaration, parse_spec

    name, kwargs = parse_spec(spec)
    files = []
    for o in declaration(name).options:
        value = kwargs.get(o.name)
        if o.holds == "spec" and isinstance(value, str) and value:
            files += named_weight_files(value.replace(";", ","))
        elif o.names_path(value):
            p = Path(value)
            if p.is_dir():
                p = next((p / n for n in RUN_FOLDER_FILES if (p / n).is_file()), p)
            files.append(str(p))
    return files


def shipped_weights_digest(specs: Iterable[str]) -> dict[str, str]:
    """``{file name: sha256 hex digest}`` of every shipped weights file
    (``twilight_env/agents/weights/*.npz``, ``*.pt``) if any of ``specs`` may read one
    (:func:`twilight_env.agents.base.reads_shipped_weights`), and of every weights file an
    agent names by path (:func:`named_weight_files`; key ``file:PATH``, ``missing`` for a
    path that is not a file); ``{}`` when there are none.

    A resumed run compares it with the digest saved when it started, so that a run
    begun with one release's networks (e.g. ``policy:default``), or with one export of a
    training line (``mmd:RUN`` reads ``RUN/policy.npz``), is never finished with another's.
    """
    import hashlib
    import os
    from pathlib import Path

    from twilight_env.agents import policy

    specs = list(specs)
    out = {}
    if any(reads_shipped_weights(s) for s in specs):
        for path in sorted(policy.WEIGHTS_DIR.iterdir()):
            if path.suffix in (".npz", ".pt"):
                out[path.name] = hashlib.sha256(path.read_bytes()).hexdigest()
    for f in sorted({f for s in specs for f in named_weight_files(s)}):
        out[NAMED_PREFIX + f] = hashlib.sha256(Path(f).read_bytes()).hexdigest() if os.path.isfile(f) else "missing"
    return out


RETIRED_WEIGHTS: dict[str, tuple[str, str | None, tuple[str, ...]]] = {
    "neural_3p.pt": ("0e9de13601ecd26f9850c354ca17479a96df408f41d7d5c0f6d3fb2761964786", "neural_3p.npz", ("neural",)),
    "neural_4p.pt": ("12498b461636d7f9bdb065bd8541f6dcd908a3172b21d6db2bed83c067531210", "neural_4p.npz", ("neural",)),
    "exit_3p.pt": ("747347b16c8e2b5621d3c5cd9bae557ca20ae1789e268c466490fa7106aa11e0", None, ("exit", "exit-search")),
    "exit_4p.pt": ("dffec1f3afad6a7e97a6c5e8da9d38d29b66bcfe1082621bd665d955c51621c0", None, ("exit", "exit-search")),
}
"""Shipped weights files that left ``agents/weights/`` (results/README.md: the commit that holds
them): file -> (its sha256 when it left, the file that holds the same weights since, or None,
the agents that read it). A run saved while they were shipped resumes if it did not depend on
them: the same weights are still checked under the other file (``neural_{3,4}p.pt``, exported
bit for bit to ``.npz``), or none of its specs names an agent that read the file
(``exit_{3,4}p.pt``: ``exit`` and ``exit-search``, and ``respond``, whose target may be one)."""


def _retired_and_unused(name: str, digest: str, saved: dict, changed: set[str], specs: list[str]) -> bool:
    """Whether a file of a run's saved digest that is no longer shipped played no part in the
    run (:data:`RETIRED_WEIGHTS`)."""
    import re

    if name not in RETIRED_WEIGHTS:
        return False
    sha, successor, readers = RETIRED_WEIGHTS[name]
    if digest != sha:
        return False
    if successor is not None and successor in saved and successor not in changed:
        return True
    words = re.compile(r"(?<![\w-])(" + "|".join(re.escape(r) for r in (*readers, "respond")) + r")(?![\w-])")
    return not any(words.search(spec) for spec in specs)


def check_shipped_weights(saved, specs: Iterable[str], what: str) -> dict[str, str]:
    """The saved digest of a run's shipped weights, after checking that every file it
    names is unchanged (:func:`shipped_weights_digest`).

    Args:
        saved: the digest the run saved when it started (``{}`` for a run whose agents
            read no shipped weights; ``None`` for a run saved before runs kept one).
        specs: the run's agent specs.
        what: the file, for the message.

    Raises:
        ValueError: a malformed digest, or shipped weights that changed (or went) since
            the run started, naming the files: its finished deals were played with other
            networks than a resumed sitting would play; or a run without a digest whose
            agents read shipped weights (nothing shows which networks it played).
    """
    if saved is None:
        readers = list(dict.fromkeys(s for s in specs if reads_shipped_weights(s)))  # each spec once
        if readers:
            who = f"its agent {readers[0]} reads" if len(readers) == 1 else f"its agents {', '.join(readers)} read"
            raise ValueError(f"{what} keeps no digest of the shipped weights (it was saved before runs kept one), "
                             f"but {who} them, so nothing shows that a resumed sitting would "
                             "play the networks its finished deals were played with; start a new run")
        return {}
    if not isinstance(saved, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in saved.items()):
        raise ValueError(f"{what} is malformed: 'weights' must map file names to sha256 digests")
    specs = list(specs)
    now = shipped_weights_digest(specs) if saved else {}
    changed = {k for k, v in saved.items() if now.get(k) != v}
    changed = sorted(k for k in changed if k in now or not _retired_and_unused(k, saved[k], saved, changed, specs))
    if changed:
        named = any(k.startswith(NAMED_PREFIX) for k in changed)
        kind = "weights" if named else "shipped weights"
        raise ValueError(f"{what}: the {kind} {', '.join(changed)} changed since the run started, so "
                         "its finished deals were played with other networks than a resumed sitting would use; "
                         "finish it with the release that started it" + (
                             " and the weights files it named (e.g. export them again from the same checkpoint)"
                             if named else "") + ", or start a new run")
    return dict(saved)


DIGEST_KEY = "sha256"
"""Key of a progress file's content digest (:func:`content_digest`)."""


def content_digest(doc: dict) -> str:
    """SHA-256 (hex) of a progress file's content: every key but :data:`DIGEST_KEY`, as
    canonical JSON (sorted keys, no spaces, ASCII), so the digest does not depend on how the
    file was formatted, only on what it holds."""
    import hashlib

    body = {k: v for k, v in doc.items() if k != DIGEST_KEY}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def with_digest(doc: dict) -> dict:
    """``doc`` with its :func:`content_digest` under :data:`DIGEST_KEY`, computed over the
    document as JSON reads it back (tuples as lists)."""
    plain = json.loads(json.dumps({k: v for k, v in doc.items() if k != DIGEST_KEY}))
    return {**plain, DIGEST_KEY: content_digest(plain)}


def check_digest(doc: dict, path: str, what: str) -> bool:
    """Check a progress file's content digest (:func:`with_digest`).

    Returns:
        True if the digest matches; False for a file written before files kept one (a
        one-line notice goes to stderr: its contents are still checked field by field,
        but an edit to an in-range value cannot be seen).

    Raises:
        ValueError: a digest that is not 64 hex digits, or one that does not match the
            content (an edit or a damaged file), naming the file.
    """
    import sys

    saved = doc.get(DIGEST_KEY)
    if saved is None:
        print(f"note: {what} {path!r} carries no content digest (written before files kept one); "
              "its fields are checked, but an edit to an in-range value cannot be detected", file=sys.stderr)
        return False
    if not isinstance(saved, str) or len(saved) != 64 or any(c not in "0123456789abcdef" for c in saved):
        raise ValueError(f"{what} {path!r} is malformed: {DIGEST_KEY!r} must be 64 lowercase hex digits")
    if content_digest(doc) != saved:
        raise ValueError(f"{what} {path!r} does not match its {DIGEST_KEY} digest: the file was edited or damaged "
                         "after it was written; restore it, or start a new run")
    return True


def check_deal_file(meta, field: str, deals: list) -> None:
    """For deals read from a file (``meta["source"] == "file"``): the deals must be the first
    ``len(deals)`` deals of the file ``meta["path"]`` names; used for progress files without a
    content digest (with one, the digest vouches for the deals).

    Raises:
        ValueError: the file is gone or unreadable, or its deals differ (naming ``field``
            and the file).
    """
    from twilight_env.records.dealsets import load_deals

    if not isinstance(meta, dict) or meta.get("source") != "file":
        return
    path = meta.get("path")
    if not isinstance(path, str) or not path:
        raise ValueError(f"{field} says the deals came from a file but names none ('path' is {path!r})")
    try:
        saved, _ = load_deals(path)
    except ValueError as e:
        raise ValueError(f"{field} names the deal file {path!r}, which cannot be read to check the deals "
                         f"({e}); put the file back at that path, or start a new run") from None
    if [[list(h) for h in d] for d in deals] != [[list(h) for h in d] for d in saved[:len(deals)]]:
        raise ValueError(f"its deals are not the first {len(deals)} deals of {path!r} ({field} says they came "
                         "from that file); were the deals or the file edited?")


def read_progress_json(path: str, what: str, max_bytes: int):
    """The JSON document of a run's progress file ``path`` (at most ``max_bytes``).

    Raises:
        JsonFileError: missing, unreadable, truncated, not UTF-8 or not JSON
            (:func:`twilight_env.util.jsonfile.read_json`), one line naming the file and
            ending with what to do (restore it from a copy, or start a new run).
    """
    try:
        return read_json(path, what, max_bytes=max_bytes)
    except JsonFileError as e:
        raise JsonFileError(f"{e}; restore it from a copy, or start a new run") from None
