"""Fixed deal sets: generate from a seed, save to and load from JSON files.

Comparing agents on the same deals removes card luck from the comparison (duplicate
format). A deal file is JSON::

    {
      "format": "twilight-deals",
      "version": 1,
      "seed": 7,              # the seed the deals were drawn with, or null
      "num_players": 4,       # 4 or 3; in 3 players seat 2 is the new moon (R7.1)
      "deals": [              # one entry per deal: 4 hands by seat, 7 card codes each (R2.3)
        [["SP", "SC3", ...], [...], [...], [...]],
        ...
      ]
    }

Deal ``i`` of a seed is the ``i``-th draw of ``numpy.random.default_rng(seed)``, so the
first deals of a seed are the same for every N. Ready-made files live in
``twilight_env/records/deals/``.
"""

from __future__ import annotations

import json
import os
from typing import Any, Sequence

import numpy as np

from twilight_env.rules.engine import hands_to_codes, random_hands, validate_deal
from twilight_env.util.atomic import atomic_file
from twilight_env.util.jsonfile import read_json
from twilight_env.util.seeding import check_seed
from twilight_env.rules.heldout import HELDOUT_SEEDS, check_not_heldout, heldout_seed  # noqa: F401 (re-exported)

FORMAT = "twilight-deals"
VERSION = 1
MAX_DEAL_FILE_BYTES = 256 << 20
"""Largest deal file read (bytes of JSON text, after gzip for ``.gz``): 256 MiB. A deal takes
about 200 bytes, so this holds over a million deals; a larger file (a gzip bomb) is refused
as soon as the limit is passed, before it fills the memory."""
DEALS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "deals")


def generate_deals(n: int, seed: int) -> list[list[list[str]]]:
    """``n`` shuffled deals (R2.3) drawn with ``numpy.random.default_rng(seed)``.

    Returns:
        list of n deals, each 4 hands (by seat) of 7 card codes.

    Raises:
        ValueError: unless n is a non-negative int and seed a non-negative int.
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"number of deals must be a non-negative integer, got {n!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    rng = np.random.default_rng(int(seed))
    return [hands_to_codes(random_hands(rng)) for _ in range(int(n))]


def check_deals(deals: Sequence, where: str = "deals") -> list[list[list[str]]]:
    """Validate deals with ``engine.validate_deal`` and return them as card codes.

    Raises:
        ValueError: naming the first bad deal (index) and what is wrong with it.
    """
    if isinstance(deals, (str, bytes, dict)) or not isinstance(deals, Sequence):
        raise ValueError(f"{where}: 'deals' must be a list of deals (4 hands of 7 card codes each), "
                         f"got {type(deals).__name__}")
    out = []
    for i, deal in enumerate(deals):
        try:
            masks = validate_deal(deal)
        except ValueError as e:
            raise ValueError(f"{where}: deal {i} is not valid: {e}") from None
        out.append(hands_to_codes(masks))
    return out


def save_deals(path: str, deals: Sequence, seed: int | None, num_players: int) -> None:
    """Write deals to a JSON deal file (format in the module docstring).

    The file is written atomically (:func:`twilight_env.util.atomic.atomic_file`): a crash or a
    full disk leaves the previous file, never a part of the new one.

    Raises:
        ValueError: on an invalid deal or a num_players other than 3 or 4.
        WriteError: (an ``OSError``) the file cannot be written, one line naming it.
    """
    if num_players not in (3, 4):
        raise ValueError(f"num_players must be 3 or 4, got {num_players!r}")
    deals = check_deals(deals)
    doc = {"format": FORMAT, "version": VERSION, "seed": seed, "num_players": int(num_players),
           "deals": deals}
    parent = os.path.dirname(os.path.abspath(path))
    os.makedirs(parent, exist_ok=True)
    with atomic_file(path) as f:  # whole or not at all (a full disk: WriteError naming the file)
        f.write('{"format": %s, "version": %d, "seed": %s, "num_players": %d, "deals": [\n'
                % (json.dumps(FORMAT), VERSION, json.dumps(seed), num_players))
        f.write(",\n".join(json.dumps(d) for d in doc["deals"]))
        f.write("\n]}\n")


def load_deals(path: str, num_players: int | None = None) -> tuple[list[list[list[str]]], dict]:
    """Read and validate a deal file.

    Args:
        path: a JSON deal file (module docstring).
        num_players: if given, the file's ``num_players`` must match it.

    Returns:
        ``(deals, meta)``: the deals as card codes, and ``{"seed", "num_players", "path"}``.

    A UTF-8 byte-order mark is accepted; a name ending in ``.gz`` is read as gzip.

    Raises:
        ValueError: in one line naming the file: missing, a folder or unreadable, a
            truncated or damaged gzip stream, not UTF-8, not JSON (line and column), nested
            deeper than any deal file, larger than :data:`MAX_DEAL_FILE_BYTES` (a
            :class:`~twilight_env.util.jsonfile.JsonFileError`);
            wrong format, a bad deal (its index and the fault), no deals, or a num_players
            mismatch.
    """
    doc = read_json(path, "deal file", max_bytes=MAX_DEAL_FILE_BYTES)
    if not isinstance(doc, dict) or "deals" not in doc:
        raise ValueError(f"deal file {path!r} must be a JSON object with keys 'deals', 'seed', 'num_players' "
                         f"(format {FORMAT!r})")
    if doc.get("format", FORMAT) != FORMAT:
        raise ValueError(f"deal file {path!r} has format {doc.get('format')!r}; expected {FORMAT!r}")
    np_file = doc.get("num_players")
    if np_file not in (3, 4) or isinstance(np_file, bool):
        raise ValueError(f"deal file {path!r}: num_players must be 3 or 4, got {np_file!r}")
    if num_players is not None and np_file != num_players:
        raise ValueError(f"deal file {path!r} holds {np_file}-player deals, but {num_players} players were asked for")
    seed = doc.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise ValueError(f"deal file {path!r}: seed must be an integer or null, got {seed!r}")
    deals = check_deals(doc["deals"], where=f"deal file {path!r}")
    if not deals:
        raise ValueError(f"deal file {path!r} holds no deals")
    return deals, {"seed": seed, "num_players": np_file, "path": path}


def deal_set(n: int | None, seed: int | None, num_players: int, deals_file: str | None = None,
             save: str | None = None) -> tuple[list[list[list[str]]], dict]:
    """The deals of a run: from ``deals_file`` (its first ``n`` if n is given) or generated
    with ``seed`` (None: 0).

    Returns:
        ``(deals, meta)`` as in :func:`load_deals`, meta also with ``"source"``.

    Raises:
        ValueError: as :func:`load_deals` (prefixed with ``--deals-file``), or when the
            file holds fewer than ``n`` deals.
    """
    if deals_file:
        try:
            deals, meta = load_deals(deals_file, num_players)
        except ValueError as e:
            raise ValueError(f"--deals-file: {e}") from None
        if n is not None:
            if n > len(deals):
                raise ValueError(f"--deals-file {deals_file!r} holds {len(deals)} deals; --deals {n} were asked for")
            deals = deals[:n]
        meta["source"] = "file"
    else:
        seed = 0 if seed is None else seed
        deals = generate_deals(n, seed)
        meta = {"seed": seed, "num_players": num_players, "path": None, "source": "seed"}
    if save:
        save_deals(save, deals, meta["seed"], num_players)
    return deals, meta


def run_seed(seed: int | None, meta: dict) -> int:
    """The seed of a run's agents (and bootstrap): ``seed`` when given; else the seed saved
    in the deal file the deals came from (``meta`` of :func:`deal_set`), so that a run on
    a saved deal file repeats the run that saved it; else 0."""
    if seed is not None:
        return seed
    return meta["seed"] if meta["seed"] is not None else 0


def seed_of(value: Any, flag: str = "--seed") -> int:
    """A seed (int >= 0) or the name of a held-out deal set (``heldout-2``), as its seed.

    Raises:
        ValueError: neither (the message lists the held-out names).
    """
    if isinstance(value, str):
        if value in HELDOUT_SEEDS:
            return heldout_seed(value)
        if value.strip().isdigit():
            return check_seed(int(value.strip()), flag, allow_none=False)
        raise ValueError(f"{flag} takes a seed (an integer >= 0) or a held-out deal set "
                         f"({', '.join(sorted(HELDOUT_SEEDS))}), got {value!r}")
    return check_seed(value, flag, allow_none=False)


def seed_or_deal_set(text: str) -> int:
    """argparse type of ``--seed``: an integer >= 0, or the name of a held-out deal set
    (:data:`HELDOUT_SEEDS`), taken as its seed.

    Raises:
        argparse.ArgumentTypeError: neither (the message lists the held-out names).
    """
    import argparse

    try:
        return seed_of(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e).removeprefix("--seed ")) from None
