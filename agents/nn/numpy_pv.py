"""The expert-iteration network's forward pass in NumPy, and its weights in a torch-free file.

:class:`NumpyPolicyValueNet` computes the function of
:class:`twilight_env.agents.exit.PolicyValueNet` (same compact rows, roles and legal masks; policy
over the 31 action ids and value in [-1, 1]) from its parameters, so the network plays,
and guides the ``guided`` search, without torch. Agreement with torch within float32
tolerance is tested (``tests/agents/test_guided.py``).

File format (``numpy.savez``, read with ``allow_pickle=False``), written by
:func:`save_pv_npz` / :func:`export_pv_npz` and read by :func:`load_pv_npz`: one float32 array
per parameter of the torch ``state_dict`` under the same name (``trunk.0.weight``,
``policy_heads.R.K.weight``, ``value_heads.R.K.weight``, ...), plus ``__meta__``, a 0-d
unicode array holding JSON ``{"format": "twilight-exit-npz", "version": 1, "num_players":
3 | 4, "net": {"num_roles", "trunk", "head"}, "tricks": 1..7}``. ``tricks`` is the deck the
network was trained on (7: the full deck of 28 cards; below 7 a reduced deck,
:func:`twilight_env.rules.cards.deck_mask`); files written before it was recorded have no
``tricks`` and are read as full-deck networks (7), so the version stays 1.
"""

from __future__ import annotations

import os

import numpy as np

from twilight_env.rules.engine import NUM_TRICKS

from twilight_env.agents.nn.features import BITS_PER_MASK, STATE_SIZE
from twilight_env.agents.nn.npz_file import flush_subnormal, read_weights_npz, write_weights_npz
from twilight_env.agents.nn.numpy_net import linear_names

PV_FORMAT = "twilight-exit-npz"
PV_VERSION = 1


class NumpyPolicyValueNet:
    """The expert-iteration network's forward pass in NumPy, equal to
    :class:`twilight_env.agents.exit.PolicyValueNet` within float32 tolerance
    (``tests/agents/test_guided.py``).

    Args:
        params: parameter name -> array, as in the torch ``state_dict`` (``trunk.0.weight``,
            ``policy_heads.R.K.weight``, ``value_heads.R.K.weight``, ...).
        net: the config dict (``num_roles``, ``trunk``, ``head``).
        tricks: the deck the network was trained on, in tricks per deal (7: the full deck;
            1..6: the reduced deck of :func:`twilight_env.rules.cards.deck_mask`). Recorded
            only: the forward pass is the same; players of the network compare it with the
            deal's (the ``mmd`` agent).
        keep_subnormal: False (the default): the forward pass's float32 copies of the
            weights hold 0 where a weight is subnormal
            (:func:`~twilight_env.agents.nn.npz_file.flush_subnormal`: the same play, faster);
            True: the weights as given, for a benchmark that compares the two
            (``benchmarks/subnormal_weights.py``). :attr:`params` keeps the weights as given
            either way; :meth:`twilight_env.agents.exit.TorchForward.from_numpy` follows
            :attr:`keep_subnormal`.

    Raises:
        ValueError: a parameter missing, extra, or of the wrong shape; a network whose
            encoder is not ``"mlp"`` (the ``"cards"`` encoder plays with torch, ``exit:PATH``);
            ``tricks`` not an int 1..7.
    """

    def __init__(self, params: dict, net: dict, tricks: int = NUM_TRICKS, keep_subnormal: bool = False):
        if isinstance(tricks, bool) or not isinstance(tricks, int) or not 1 <= tricks <= NUM_TRICKS:
            raise ValueError(f"tricks (the deck a network was trained on) must be an int 1..{NUM_TRICKS} "
                             f"({NUM_TRICKS}: the full deck), got {tricks!r}")
        self.tricks = tricks
        """Tricks per deal of the deck the network was trained on (7: the full deck)."""
        if net.get("encoder", "mlp") != "mlp":
            raise ValueError(f"the NumPy forward pass is for the 'mlp' encoder only, this network has "
                             f"encoder {net.get('encoder')!r}; play it with torch (exit:PATH)")
        trunk = [int(x) for x in net["trunk"]]
        head = [int(x) for x in net["head"]]
        roles = int(net["num_roles"])
        shapes: dict[str, tuple] = {}
        sizes = [STATE_SIZE, *trunk]
        for name, (a, b) in zip(linear_names("trunk", len(trunk)), zip(sizes[:-1], sizes[1:])):
            shapes[f"{name}.weight"], shapes[f"{name}.bias"] = (b, a), (b,)
        for kind, out in (("policy_heads", 31), ("value_heads", 1)):
            hs = [trunk[-1], *head, out]
            for r in range(roles):
                for name, (a, b) in zip(linear_names(f"{kind}.{r}", len(hs) - 1), zip(hs[:-1], hs[1:])):
                    shapes[f"{name}.weight"], shapes[f"{name}.bias"] = (b, a), (b,)
        params = {k: np.asarray(v) for k, v in params.items()}
        missing = sorted(set(shapes) - set(params))
        extra = sorted(set(params) - set(shapes))
        if missing or extra:
            raise ValueError(f"policy/value weights do not match the config {net}: missing {missing[:4]}, "
                             f"unexpected {extra[:4]}")
        for k, shape in shapes.items():
            if tuple(params[k].shape) != shape:
                raise ValueError(f"policy/value weight {k!r} has shape {tuple(params[k].shape)}, expected {shape}")

        flush = (lambda a: a) if keep_subnormal else flush_subnormal

        def layers(prefix, n):  # own float32 copies, subnormal weights set to 0 unless kept
            return [(flush(np.array(params[f"{m}.weight"].T, dtype=np.float32, order="C")),
                     flush(np.array(params[f"{m}.bias"], dtype=np.float32))) for m in linear_names(prefix, n)]

        self.num_roles = roles
        self.params = params
        """The weights as given (name -> array), e.g. to rebuild the torch network on a device."""
        self.keep_subnormal = bool(keep_subnormal)
        """As given: whether the forward pass plays the subnormal weights as stored (its torch
        twin, :meth:`twilight_env.agents.exit.TorchForward.from_numpy`, does the same)."""
        self.net = {"num_roles": roles, "trunk": trunk, "head": head}
        """The config dict (``num_roles``, ``trunk``, ``head``)."""
        self._trunk = layers("trunk", len(trunk))
        self._policy = [layers(f"policy_heads.{r}", len(head) + 1) for r in range(roles)]
        self._value = [layers(f"value_heads.{r}", len(head) + 1) for r in range(roles)]
        self._shifts = np.arange(BITS_PER_MASK, dtype=np.int64)
        self._fused = None
        if len(head) == 1:  # one hidden head layer (the shipped shapes): a role's two first layers in one product
            self._fused = [(np.concatenate([self._policy[r][0][0], self._value[r][0][0]], axis=1),
                            np.concatenate([self._policy[r][0][1], self._value[r][0][1]]),
                            self._policy[r][1], self._value[r][1]) for r in range(roles)]

    def played_arrays(self) -> list[np.ndarray]:
        """The float32 weight and bias arrays the forward pass reads, each weight once: the
        trunk's, then each role's heads' (the two first head layers as the one fused product
        where the heads have one hidden layer); the copies :meth:`__init__` made, subnormal
        weights set to 0 unless ``keep_subnormal``."""
        if self._fused is not None:
            heads = [x for w, b, out_p, out_v in self._fused for x in (w, b, *out_p, *out_v)]
        else:
            heads = [x for r in range(self.num_roles) for part in (self._policy[r], self._value[r]) for wb in part for x in wb]
        return [x for wb in self._trunk for x in wb] + heads

    @staticmethod
    def _mlp(x, layers):
        for i, (w, b) in enumerate(layers):
            x = x @ w + b
            if i < len(layers) - 1:
                np.maximum(x, 0.0, out=x)
        return x

    def forward(self, rows: np.ndarray, roles: np.ndarray, legal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Policy and value of a batch of decisions.

        Args:
            rows: ``(B, 25)`` int64 compact rows; roles: ``(B,)`` int head per decision;
            legal: ``(B, 31)`` bool, at least one True per row.

        Returns:
            ``probs`` ``(B, 31)`` float32 (0 on illegal actions, rows sum to 1) and ``value``
            ``(B,)`` float32 in [-1, 1], the deciding side's (deal points difference) / 360.

        Raises:
            ValueError: a role outside ``0..num_roles-1`` or a row without legal actions.
        """
        rows = np.asarray(rows, dtype=np.int64)
        roles = np.asarray(roles, dtype=np.int64)
        legal = np.asarray(legal, dtype=bool)
        if roles.size and (roles.min() < 0 or roles.max() >= self.num_roles):
            raise ValueError(f"roles must be in 0..{self.num_roles - 1}, got {sorted(set(roles.tolist()))}")
        if legal.shape[0] and not legal.any(axis=1).all():
            raise ValueError("every decision needs at least one legal action")
        x = ((rows[:, :, None] >> self._shifts) & 1).reshape(rows.shape[0], STATE_SIZE).astype(np.float32)
        w0, b0 = self._trunk[0]
        return self.forward_first(x @ w0 + b0, roles, legal)

    @property
    def first_layer(self) -> tuple[np.ndarray, np.ndarray]:
        """The trunk's first layer as ``(W (700, trunk[0]), b (trunk[0],))`` float32, so that
        a caller with a faster product of 0/1 inputs (a sum of the rows of ``W`` at the set
        bits) can hand :meth:`forward_first` its result."""
        return self._trunk[0]

    def forward_first(self, pre: np.ndarray, roles: np.ndarray, legal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`forward` from the first layer's pre-activations ``pre`` ``(B, trunk[0])``
        (``expanded rows @ W + b``); ``roles`` and ``legal`` as in :meth:`forward`."""
        roles = np.asarray(roles, dtype=np.int64)
        h = np.maximum(np.asarray(pre, dtype=np.float32), 0.0)
        for w, b in self._trunk[1:]:
            h = np.maximum(h @ w + b, 0.0)  # the trunk ends in a ReLU
        logits, value = self._heads_by_role(h, roles)
        logits = np.where(legal, logits, -np.inf)
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(axis=1, keepdims=True)
        return p.astype(np.float32), np.tanh(value).astype(np.float32)

    def forward_one(self, row, role: int, legal: np.ndarray) -> tuple[np.ndarray, float]:
        """:meth:`forward` of one decision, with the first layer as a sum of the weight rows at
        the row's set bits (about a tenth of the 700 inputs), so that a single decision reads
        a tenth of the first layer's weights.

        Args:
            row: the 25 compact masks (a sequence of int); role: its head (``0..num_roles-1``);
            legal: ``(31,)`` bool, at least one True.

        Returns:
            ``probs`` ``(31,)`` float32 (0 on illegal actions) and the value, a float in [-1, 1].

        Raises:
            ValueError: a role outside ``0..num_roles-1`` or no legal action.
        """
        if not 0 <= int(role) < self.num_roles:
            raise ValueError(f"roles must be in 0..{self.num_roles - 1}, got [{role}]")
        legal = np.asarray(legal, dtype=bool)
        if not legal.any():
            raise ValueError("every decision needs at least one legal action")
        r = np.fromiter(row, dtype=np.int64, count=len(row))
        bits = np.flatnonzero((r[:, None] >> self._shifts) & 1)
        w0, b0 = self._trunk[0]
        pre = np.add.reduce(w0[bits], axis=0) + b0
        p, v = self.forward_first(pre[None], np.array([int(role)]), legal[None])
        return p[0], float(v[0])

    def _heads_by_role(self, h, roles):
        """Logits and pre-tanh values, one role's rows at a time (any head depth)."""
        logits = np.empty((h.shape[0], 31), dtype=np.float32)
        value = np.empty(h.shape[0], dtype=np.float32)
        for r in range(self.num_roles):
            idx = np.nonzero(roles == r)[0] if self.num_roles > 1 else slice(None)
            hr = h[idx]
            if hr.shape[0] == 0:
                continue
            if self._fused is not None:
                w1, b1, (wp, bp), (wv, bv) = self._fused[r]
                a = np.maximum(hr @ w1 + b1, 0.0)
                n = wp.shape[0]
                logits[idx] = a[:, :n] @ wp + bp
                value[idx] = (a[:, n:] @ wv + bv)[:, 0]
            else:
                logits[idx] = self._mlp(hr, self._policy[r])
                value[idx] = self._mlp(hr, self._value[r])[:, 0]
        return logits, value


def save_pv_npz(path: str | os.PathLike, params: dict, net: dict, num_players: int,
                tricks: int = NUM_TRICKS) -> None:
    """Write policy/value weights in the module's ``.npz`` format, atomically (temporary file, ``os.replace``).

    Args:
        tricks: the deck the network was trained on (7, the full deck, by default; 1..6 a
            reduced deck), stored in ``__meta__`` (module docstring).

    Raises:
        ValueError: weights that do not fit ``net``, or ``tricks`` not an int 1..7 (as
            :class:`NumpyPolicyValueNet`).
    """
    NumpyPolicyValueNet(params, net, tricks)  # refuses weights that do not fit the config, and a bad deck
    write_weights_npz(path, {"format": PV_FORMAT, "version": PV_VERSION, "num_players": int(num_players),
                             "net": {"num_roles": int(net["num_roles"]), "trunk": [int(x) for x in net["trunk"]],
                                     "head": [int(x) for x in net["head"]]}, "tricks": tricks}, params)


def load_pv_npz(path: str | os.PathLike, num_players: int | None = None,
                keep_subnormal: bool = False) -> tuple[NumpyPolicyValueNet, int]:
    """Load weights written by :func:`save_pv_npz`; needs only NumPy.

    Args:
        keep_subnormal: as :class:`NumpyPolicyValueNet` (False: subnormal weights play as 0).

    Returns:
        ``(network, num_players)``; the network's :attr:`~NumpyPolicyValueNet.tricks` is the
        file's ``tricks``, or 7 (the full deck) in a file written before it was recorded.

    Raises:
        ValueError: missing, not a weights file of this format, damaged, for the other
            number of players, or a ``tricks`` that is not an int 1..7; the message names
            the file.
    """
    path = os.fspath(path)
    meta, params = read_weights_npz(path, "policy/value weights")
    if not isinstance(meta, dict) or meta.get("format") != PV_FORMAT or meta.get("version") != PV_VERSION:
        raise ValueError(f"{path!r} is not a {PV_FORMAT} v{PV_VERSION} weights file")
    npl = meta.get("num_players")
    if npl not in (3, 4):
        raise ValueError(f"{path!r}: num_players must be 3 or 4, got {npl!r}")
    if num_players is not None and npl != num_players:
        raise ValueError(f"policy/value weights {path!r} are for {npl} players, but a {num_players}-player "
                         "network is needed")
    tricks = meta.get("tricks", NUM_TRICKS)
    if isinstance(tricks, bool) or not isinstance(tricks, int) or not 1 <= tricks <= NUM_TRICKS:
        raise ValueError(f"{path!r}: tricks (the deck the network was trained on) must be an int 1..{NUM_TRICKS}, "
                         f"or absent for the full deck; got {tricks!r}")
    try:
        return NumpyPolicyValueNet(params, meta["net"], tricks, keep_subnormal), npl
    except (KeyError, TypeError) as e:
        raise ValueError(f"{path!r}: malformed network config ({e})") from None


def export_pv_npz(checkpoint: str | os.PathLike, out: str | os.PathLike) -> None:
    """Export an expert-iteration checkpoint (``.pt``, needs torch) to the torch-free ``.npz`` format.

    Raises:
        ValueError: as :func:`twilight_env.agents.exit.load_exit_checkpoint`.
    """
    from twilight_env.agents.exit import load_exit_checkpoint, model_from_exit_checkpoint

    ckpt = load_exit_checkpoint(checkpoint)
    model = model_from_exit_checkpoint(ckpt, str(checkpoint))
    params = {k: v.detach().cpu().numpy().astype(np.float32) for k, v in model.state_dict().items()}
    save_pv_npz(out, params, model.cfg.to_dict(), ckpt["num_players"])


__all__ = ["PV_FORMAT", "PV_VERSION", "NumpyPolicyValueNet", "save_pv_npz", "load_pv_npz", "export_pv_npz"]
