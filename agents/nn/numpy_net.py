"""The Deep Monte-Carlo Q-network's forward pass in NumPy: playing a network without torch.

:class:`NumpyQNetwork` computes exactly the function of
:class:`twilight_env.agents.nn.network.QNetwork` (same compact rows, roles, actions and owners; same
split first head layer) from weights exported to a ``.npz`` file by
:func:`export_npz`. Loading and playing need only NumPy, so the ``neural`` agent runs
where torch is not installed (``twilight_env.agents.neural``: ``backend="numpy"``, or ``"auto"``
without torch). Agreement with torch is tested within float32 tolerance
(``tests/training/test_numpy_net.py``).

File format (``numpy.savez``, read with ``allow_pickle=False``): one float32 array per
parameter of the torch ``state_dict`` under the same name (``trunk.0.weight`` ...,
``heads.R.K.weight``), plus ``__meta__``, a 0-d unicode array holding JSON
``{"format": "twilight-dmc-npz", "version": 1, "num_players": 3 | 4, "net": NetConfig dict}``.
"""

from __future__ import annotations

import os
from typing import Sequence

import numpy as np

from twilight_env.agents.nn.features import ACTION_FEATURES, ACTION_SIZE, BITS_PER_MASK, NUM_MASKS, STATE_SIZE
from twilight_env.agents.nn.npz_file import read_weights_npz, write_weights_npz  # noqa: F401 (also exported here)

FORMAT = "twilight-dmc-npz"
VERSION = 1


def linear_names(prefix: str, n_layers: int) -> list[str]:
    """Parameter names of the Linear layers of an ``nn.Sequential`` with ReLUs between."""
    return [f"{prefix}.{2 * i}" for i in range(n_layers)]


def _expected_shapes(net: dict) -> dict[str, tuple]:
    """Every parameter name of a QNetwork with this config and its shape."""
    trunk = [int(x) for x in net["trunk"]]
    head = [int(x) for x in net["head"]]
    shapes: dict[str, tuple] = {}
    sizes = [STATE_SIZE, *trunk]
    for name, (a, b) in zip(linear_names("trunk", len(trunk)), zip(sizes[:-1], sizes[1:])):
        shapes[f"{name}.weight"] = (b, a)
        shapes[f"{name}.bias"] = (b,)
    hsizes = [trunk[-1] + ACTION_SIZE, *head, 1]
    for r in range(int(net["num_roles"])):
        for name, (a, b) in zip(linear_names(f"heads.{r}", len(hsizes) - 1), zip(hsizes[:-1], hsizes[1:])):
            shapes[f"{name}.weight"] = (b, a)
            shapes[f"{name}.bias"] = (b,)
    return shapes


class NumpyQNetwork:
    """Q(information set, action) in NumPy, equal to :class:`~twilight_env.agents.nn.network.QNetwork`.

    Args:
        params: parameter name -> float32 array, as in the torch ``state_dict``.
        net: the network's config dict (``num_roles``, ``trunk``, ``head``).
        num_players: 3 or 4.

    Raises:
        ValueError: a parameter missing, extra, or of the wrong shape.
    """

    def __init__(self, params: dict, net: dict, num_players: int):
        shapes = _expected_shapes(net)
        missing = sorted(set(shapes) - set(params))
        extra = sorted(set(params) - set(shapes))
        if missing or extra:
            raise ValueError(f"network weights do not match the config {net}: missing {missing[:4]}, "
                             f"unexpected {extra[:4]}")
        for k, shape in shapes.items():
            if tuple(params[k].shape) != shape:
                raise ValueError(f"network weight {k!r} has shape {tuple(params[k].shape)}, expected {shape}")
        self.net = {"num_roles": int(net["num_roles"]), "trunk": [int(x) for x in net["trunk"]],
                    "head": [int(x) for x in net["head"]]}
        self.num_players = int(num_players)
        p = {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in params.items()}
        self.params = p
        self._trunk = [(p[f"{n}.weight"].T.copy(), p[f"{n}.bias"])
                       for n in linear_names("trunk", len(self.net["trunk"]))]
        T = self.net["trunk"][-1]
        self._heads = []
        for r in range(self.net["num_roles"]):
            names = linear_names(f"heads.{r}", len(self.net["head"]) + 1)
            w0 = p[f"{names[0]}.weight"]
            state_part = (w0[:, :T].T.copy(), p[f"{names[0]}.bias"])
            action_part = ACTION_FEATURES.astype(np.float32) @ w0[:, T:].T  # (31, head[0]) once per network
            rest = [(p[f"{n}.weight"].T.copy(), p[f"{n}.bias"]) for n in names[1:]]
            self._heads.append((state_part, action_part.astype(np.float32), rest))
        self._shifts = np.arange(BITS_PER_MASK, dtype=np.int64)

    def expand(self, rows: np.ndarray) -> np.ndarray:
        """``(B, 25)`` int64 compact rows -> ``(B, 700)`` float32 bits."""
        rows = np.asarray(rows, dtype=np.int64)
        return ((rows[:, :, None] >> self._shifts) & 1).reshape(rows.shape[0], NUM_MASKS * BITS_PER_MASK) \
            .astype(np.float32)

    def trunk_forward(self, rows: np.ndarray) -> np.ndarray:
        """Trunk output ``(B, trunk[-1])`` float32 of compact rows ``(B, 25)``."""
        x = self.expand(rows)
        for w, b in self._trunk:
            x = np.maximum(x @ w + b, 0.0)
        return x

    def forward(self, rows, roles, actions, owner=None) -> np.ndarray:
        """Q-values of action rows; arguments and result as :meth:`QNetwork.forward`.

        Args:
            rows: ``(B, 25)`` int64 compact rows, one per decision.
            roles: ``(B,)`` int head index per decision.
            actions: ``(N,)`` int action ids 0..30.
            owner: ``(N,)`` int decision index of each action row (None: ``arange(B)``).

        Returns:
            ``(N,)`` float32 Q-values in deal points / 360.
        """
        h = self.trunk_forward(rows)
        roles = np.asarray(roles, dtype=np.int64)
        actions = np.asarray(actions, dtype=np.int64)
        owner = np.arange(h.shape[0]) if owner is None else np.asarray(owner, dtype=np.int64)
        if roles.size and (roles.min() < 0 or roles.max() >= len(self._heads)):
            raise ValueError(f"roles must be in 0..{len(self._heads) - 1}, got {sorted(set(roles.tolist()))}")
        out = np.empty(actions.shape[0], dtype=np.float32)
        pair_roles = roles[owner]
        for r, ((w0, b0), ta, rest) in enumerate(self._heads):
            idx = np.nonzero(pair_roles == r)[0]
            if not idx.size:
                continue
            x = np.maximum((h @ w0 + b0)[owner[idx]] + ta[actions[idx]], 0.0)
            for i, (w, b) in enumerate(rest):
                x = x @ w + b
                if i < len(rest) - 1:
                    x = np.maximum(x, 0.0)
            out[idx] = x[:, 0]
        return out

    __call__ = forward

    def score_decisions(self, rows: list, roles: list, legals: Sequence[Sequence[int]]) -> list[list[float]]:
        """Per decision, the Q-values of its legal actions (as :func:`twilight_env.agents.nn.network.score_decisions`)."""
        acts, owner = [], []
        for i, legal in enumerate(legals):
            acts.extend(legal)
            owner.extend([i] * len(legal))
        q = self.forward(np.asarray(rows, dtype=np.int64), roles, acts, owner).tolist()
        out, k = [], 0
        for legal in legals:
            out.append(q[k:k + len(legal)])
            k += len(legal)
        return out


def save_npz(path: str | os.PathLike, params: dict, net: dict, num_players: int) -> None:
    """Write weights in the ``.npz`` format above, atomically (temporary file, ``os.replace``)."""
    NumpyQNetwork(params, net, num_players)  # refuses weights that do not fit the config
    write_weights_npz(path, {"format": FORMAT, "version": VERSION, "num_players": int(num_players),
                             "net": {"num_roles": int(net["num_roles"]), "trunk": [int(x) for x in net["trunk"]],
                                     "head": [int(x) for x in net["head"]]}}, params)


def load_npz(path: str | os.PathLike, num_players: int | None = None) -> NumpyQNetwork:
    """Load weights written by :func:`save_npz` / :func:`export_npz`; needs only NumPy.

    Args:
        path: the ``.npz`` file.
        num_players: the variant the caller needs (None: any).

    Raises:
        ValueError: missing, not a weights file of this format, damaged, or for the other
            number of players; the message names the file.
    """
    path = os.fspath(path)
    meta, params = read_weights_npz(path)
    if meta is None:
        raise ValueError(f"{path!r} is not a twilight network weights file (no __meta__ entry)")
    if not isinstance(meta, dict) or meta.get("format") != FORMAT or meta.get("version") != VERSION:
        raise ValueError(f"{path!r} is not a {FORMAT} v{VERSION} weights file")
    npl = meta.get("num_players")
    if npl not in (3, 4):
        raise ValueError(f"{path!r}: num_players must be 3 or 4, got {npl!r}")
    if num_players is not None and npl != num_players:
        raise ValueError(f"network weights {path!r} are for {npl} players, but a {num_players}-player "
                         "network is needed")
    try:
        return NumpyQNetwork(params, meta["net"], npl)
    except (KeyError, TypeError) as e:
        raise ValueError(f"{path!r}: malformed network config ({e})") from None


def export_npz(checkpoint: str | os.PathLike, out: str | os.PathLike) -> None:
    """Export a DMC checkpoint (``.pt``, needs torch) to the torch-free ``.npz`` format.

    Raises:
        ValueError: as :func:`twilight_env.agents.nn.checkpoint.load_checkpoint`.
    """
    from twilight_env.agents.nn.checkpoint import load_checkpoint, model_from_checkpoint

    ckpt = load_checkpoint(checkpoint)
    model = model_from_checkpoint(ckpt, str(checkpoint))
    params = {k: v.detach().cpu().numpy().astype(np.float32) for k, v in model.state_dict().items()}
    save_npz(out, params, model.cfg.to_dict(), ckpt["num_players"])


__all__ = ["FORMAT", "VERSION", "NumpyQNetwork", "save_npz", "load_npz", "export_npz", "write_weights_npz",
           "read_weights_npz"]


def main(argv=None) -> int:
    """``python -m twilight_env.agents.nn.numpy_net CKPT OUT.npz``: export a DMC checkpoint (needs torch)."""
    import argparse
    import sys

    parser = argparse.ArgumentParser(prog="python -m twilight_env.agents.nn.numpy_net",
                                     description="export a DMC checkpoint (.pt) to the torch-free .npz format")
    parser.add_argument("checkpoint", help="a checkpoint of `twilight train` or shipped weights (.pt)")
    parser.add_argument("out", help="the .npz file to write")
    args = parser.parse_args(argv)
    if not args.out.endswith(".npz"):
        parser.error(f"out must end in .npz, got {args.out!r}")
    try:
        export_npz(args.checkpoint, args.out)
    except (ValueError, ImportError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
