"""The ``.npz`` weights files of the torch-free networks: float32 arrays under their torch
``state_dict`` names plus a JSON ``__meta__`` entry, written atomically and read without pickles.

Shared by :mod:`twilight_env.agents.nn.numpy_net` (DMC), :mod:`twilight_env.agents.nn.numpy_pv`
(expert iteration) and :func:`twilight_env.agents.nn.checkpoint.load_checkpoint` (which reads
the shipped ``.npz`` weights for the torch agents), and :func:`flush_subnormal`, which the
networks' forward passes apply to the weights they play with; NumPy and the standard library only.
"""

from __future__ import annotations

import json
import os
import zipfile

import numpy as np


def flush_subnormal(a: np.ndarray) -> np.ndarray:
    """``a`` (a float array) with its subnormal entries set to 0, in place; returns ``a``
    (an array of another dtype unchanged).

    A float32 number below ``np.finfo(np.float32).tiny`` (about 1.2e-38) in magnitude, other
    than 0, is subnormal: x86 CPUs compute with it on a slow path, and a matrix holding a few
    makes the whole float32 product several times slower (the shipped 3-player network holds
    42,758 among its 524,928 weights). A subnormal weight's product with an activation is
    itself far below a unit in the last place of a sum it joins whenever that sum's other
    terms (a bias, the products of normal weights) are not themselves near ``tiny``, so such a
    sum is the same with the weight at 0; this is an argument, not a guarantee for every
    input: on real positions the shipped networks give bitwise the same outputs and the search
    the same play (``tests/agents/test_subnormal_weights.py``), in a fraction of the time
    (``benchmarks/subnormal_weights.py``).

    Raises:
        ValueError: a read-only float array (NumPy's message). AttributeError: not an array.
    """
    if a.dtype.kind == "f" and a.size:
        a[(np.abs(a) < np.finfo(a.dtype).tiny) & (a != 0)] = 0
    return a


def write_weights_npz(path: str | os.PathLike, meta: dict, params: dict) -> None:
    """Write ``params`` (float32) and ``meta`` (as the JSON ``__meta__`` entry) to an ``.npz``
    file atomically (temporary file, ``os.replace``); shared by the weight formats of
    :mod:`twilight_env.agents.nn.numpy_net` and :mod:`twilight_env.agents.nn.numpy_pv`."""
    path = os.fspath(path)
    tmp = f"{path}.tmp{os.getpid()}.npz"
    try:
        np.savez(tmp, __meta__=np.array(json.dumps(meta)),
                 **{k: np.asarray(v, dtype=np.float32) for k, v in params.items()})
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def read_weights_npz(path: str | os.PathLike, what: str = "network weights") -> tuple[dict | None, dict]:
    """``(meta or None, params)`` of an ``.npz`` written by :func:`write_weights_npz`, without pickles.

    Raises:
        ValueError: missing, a folder, or damaged; the message names ``what`` and the file.
    """
    path = os.fspath(path)
    try:
        with np.load(path, allow_pickle=False) as z:
            if not isinstance(z, np.lib.npyio.NpzFile):
                raise ValueError("a single array, not an archive")
            files = list(z.files)
            meta = json.loads(str(z["__meta__"])) if "__meta__" in files else None
            params = {k: z[k] for k in files if k != "__meta__"}
    except FileNotFoundError:
        raise ValueError(f"{what} file {path!r} does not exist") from None
    except IsADirectoryError:
        raise ValueError(f"{what} file {path!r} is a folder, not a file") from None
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, KeyError) as e:
        raise ValueError(f"{what} file {path!r} is damaged or not an .npz file ({e})") from None
    return meta, params


__all__ = ["flush_subnormal", "read_weights_npz", "write_weights_npz"]
