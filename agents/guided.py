"""Network-guided IS-MCTS: the expert-iteration network's priors and values at every node, evaluated in batches.

``guided`` searches the single-observer information-set tree (Cowling, Powley &
Whitehouse 2012) as AlphaZero searches its tree (Silver et al. 2017, 2018): PUCT
selection ``sign · Q(a) + c · P(a) · sqrt(N(a)) / (1 + n(a))`` with ``P`` the policy of
:class:`twilight_env.agents.exit.PolicyValueNet` at the node, and at each new leaf the
network's value, optionally mixed with a heuristic rollout as in AlphaGo (Silver et al.
2016): ``(1 - lam) · value + lam · rollout``. Subset-armed: ``N(a)`` counts the descents in
which ``a`` was legal (the availability of Cowling et al.); ``Q`` of an unvisited action is
the node's mean from the acting side's view minus ``fpu``.

Batches: each round runs ``batch`` descents (each in its own determinization, with a
virtual loss on its path) in compiled code (:mod:`twilight_env.agents._guided_nb`), evaluates
their leaves in one NumPy forward pass (:class:`twilight_env.agents.nn.numpy_pv.NumpyPolicyValueNet`,
no torch at play time once the weights are loaded) and backs them up, so that the
network costs one matrix product per ``batch`` leaves instead of one call per node.

Priors below the root: a node's prior is the network's policy for the seat deciding
there, read in the world (determinization) of the first descent that reached it: what
that seat would know in that world (its hand, R2.5; the new moon's open hand, R7.1). The
root's prior is read from the true information set. Values are side 0's deal score
difference / 360 (R5); a holder decides for its own side, the solo for the new moon
(R7.3). Team scoring only (the individual-lines variant, R8, is not searched).

Devices: ``device=cuda`` evaluates the leaf batches with the torch network on a CUDA device
(the same weights, :class:`twilight_env.agents.exit.TorchForward`; needs torch and a
usable GPU); the tree search itself runs on the CPU either way. ``benchmarks/gpu_speedup.py``
measures both, with batches of 32 and 128 (``docs/RESULTS.md``).

Spec: ``guided:PATH,iterations=I,batch=32,c=1.0,lam=L,fpu=0.0,device=cpu``, where ``iterations`` and
``lam`` default to the values measured for each variant (:data:`VARIANT_DEFAULTS`: 1000 and
0.5 in 3 players, 1500 and 0.8 in 4, each below the top rung's time per decision,
``docs/RESULTS.md``). ``guided:default`` reads the shipped network of ``policy:default``,
``agents/weights/policy_{3,4}p.npz`` (NumPy only: playing it needs no torch), chosen by
the deal's number of players: the expert-iteration networks of iteration 8 (3 players) and
6 (4 players), :data:`twilight_env.agents.policy.DEFAULT_SOURCES`. The iteration-1
networks it searched with before are ``guided:results/exit_scale/{3,4}p/checkpoint.pt``
(checkpoints kept in the history: ``results/README.md`` gives the command that restores them).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from twilight_env.rules.engine import NUM_TRICKS

from twilight_env.agents.base import check_number
from twilight_env.agents.pimc import check_positive_int
from twilight_env.agents.policy import default_weights as _policy_weights, load_network as _load_network

DEFAULT_MAX_NODES = 100_000
"""Tree nodes kept at most (about 0.9 KB each)."""
VARIANT_DEFAULTS = {3: {"iterations": 1000, "lam": 0.5}, 4: {"iterations": 1500, "lam": 0.8}}
"""``iterations`` and ``lam`` of ``guided`` when the spec leaves them out, by number of players:
the settings measured against each variant's top rung (``docs/RESULTS.md``)."""


def _nb():
    from twilight_env.agents import fast_rollout

    fast_rollout.resolve_backend("numba", option=None)  # guided has no Python search to fall back to
    from twilight_env.agents import _guided_nb

    return _guided_nb


def default_weights(num_players: int) -> Path:
    """Path of the shipped policy/value weights of ``guided:default`` for 3 or 4 players (torch-free ``.npz``).

    The same file as ``policy:default``'s (:func:`twilight_env.agents.policy.default_weights`):
    one shipped network per variant, searched by ``guided`` and played alone by ``policy``.

    Raises:
        ValueError: a number of players other than 3 or 4.
    """
    return _policy_weights(num_players)


def numpy_model(path: str, num_players: int | None = None):
    """The :class:`~twilight_env.agents.nn.numpy_pv.NumpyPolicyValueNet` of ``path`` and its number of players.

    Args:
        path: ``"default"`` (the shipped ``policy_{3,4}p.npz``, needs ``num_players``), a
            ``.npz`` file of :func:`~twilight_env.agents.nn.numpy_pv.save_pv_npz` (no torch
            needed), or an expert-iteration checkpoint / run directory (read with torch).
        num_players: the variant the caller needs (None: any, unless ``path`` is ``"default"``).

    Returns:
        ``(network, num_players)``.

    Raises:
        ValueError: a missing, damaged or mismatched file (naming it).
    """
    if path == "default" and num_players not in (3, 4):
        raise ValueError(f"guided:default needs the number of players (3 or 4), got {num_players!r}")
    return _load_network(path, num_players)


def _check_cuda() -> None:
    """Raise a ValueError unless torch is importable and sees a usable CUDA device."""
    try:
        import torch
    except ImportError:
        raise ValueError("guided option device='cuda' needs torch (pip install 'twilight-env[train]'); "
                         "use device=cpu") from None
    if not torch.cuda.is_available():
        raise ValueError(f"guided option device='cuda' asked, but torch {torch.__version__} sees no usable CUDA "
                         "device (torch.cuda.is_available() is False); use device=cpu")


def history_masks(infoset) -> np.ndarray:
    """``(8,)`` int64: cards played *for* seats 0..3 (as chooser), then *from* seats 0..3 (as holder), R3.3."""
    h = np.zeros(8, dtype=np.int64)
    for chooser, holder, card in infoset.history:
        h[chooser] |= 1 << card
        h[4 + holder] |= 1 << card
    return h


def search(infoset, legal_actions, net, iterations: int, rng: np.random.Generator, *, batch: int = 16,
           c: float = 1.0, lam: float = 0.5, fpu: float = 0.0,
           max_nodes: int = DEFAULT_MAX_NODES) -> tuple[np.ndarray, np.ndarray]:
    """Network-guided IS-MCTS from ``infoset`` (module docstring).

    Args:
        infoset: the searching seat's :class:`~twilight_env.rules.infoset.InfoSet` (to act).
        legal_actions: its legal action ids.
        net: a :class:`~twilight_env.agents.nn.numpy_net.NumpyPolicyValueNet` (or any object with
            its ``forward(rows, roles, legal)``) for the deal's number of players.
        iterations: descents (>= 1), run in rounds of ``batch``.
        rng: one integer is drawn from it to seed the compiled draws.
        batch: descents per forward pass (>= 1).
        c: PUCT constant (>= 0); lam: rollout weight in [0, 1]; fpu: first-play reduction (>= 0).

    Returns:
        ``(visits, values)`` ``(31,)``: root visits (int64) and mean outcomes from the root
        acting side's view (float64, 0 where unvisited).

    Raises:
        ValueError: on a bad argument (naming it and what is allowed).
    """
    from twilight_env.agents.fast_ismcts import draw_seed, infoset_arrays
    from twilight_env.agents.nn.features import infoset_row, role_of

    check_positive_int("iterations", iterations)
    check_positive_int("batch", batch)
    for name, v, hi in (("c", c, None), ("lam", lam, 1.0), ("fpu", fpu, None)):
        check_number(name, v, 0, hi, agent="guided")
    nb = _nb()
    base, hidden, counts, pool0, pool1 = infoset_arrays(infoset)
    nn = min(int(iterations) + 1, int(max_nodes))
    child = np.full((nn, 31), -1, dtype=np.int32)
    visits = np.zeros((nn, 31), dtype=np.int32)
    avail = np.zeros((nn, 31), dtype=np.int32)
    value = np.zeros((nn, 31), dtype=np.float64)
    prior = np.zeros((nn, 31), dtype=np.float64)
    evaluated = np.zeros(nn, dtype=np.bool_)
    legal = np.zeros((1, 31), dtype=bool)
    legal[0, list(legal_actions)] = True
    root_row = np.array([infoset_row(infoset)], dtype=np.int64)
    root_role = np.array([role_of(infoset.num_players, infoset.acting_seat)], dtype=np.int64)
    p, _ = net.forward(root_row, root_role, legal)
    prior[0] = p[0]
    evaluated[0] = True
    k = int(batch)
    paths = np.zeros((k, 64, 3), dtype=np.int64)
    depths = np.zeros(k, dtype=np.int64)
    leaf = np.zeros(k, dtype=np.int64)
    rows = np.zeros((k, 25), dtype=np.int64)
    roles = np.zeros(k, dtype=np.int64)
    sides = np.zeros(k, dtype=np.int64)
    leg = np.zeros((k, 31), dtype=np.bool_)
    z = np.zeros(k, dtype=np.float64)
    need = np.zeros(k, dtype=np.bool_)
    probs = np.zeros((k, 31), dtype=np.float64)
    hist = history_masks(infoset)
    from twilight_env.agents import fast_rollout

    params = fast_rollout.params()
    w0 = b0 = pre = None
    if hasattr(net, "first_layer"):  # the sparse first layer in compiled code (a sum of weight rows)
        w0, b0 = (np.ascontiguousarray(x, dtype=np.float32) for x in net.first_layer)
        pre = np.zeros((k, w0.shape[1]), dtype=np.float32)
    nb.seed(draw_seed(rng))
    n_nodes = 1
    done = 0
    while done < iterations:
        m = min(k, int(iterations) - done)
        n_nodes = nb.descend_batch(m, base, hist, hidden, counts, pool0, pool1, child, visits, avail, value, prior,
                                   evaluated, n_nodes, float(c), float(fpu), float(lam), params, paths, depths,
                                   leaf, rows, roles, sides, leg, z, need)
        sel = np.nonzero(need[:m])[0]
        leaf_value = z[:m].copy()
        if sel.size:
            if w0 is None:
                pr, v = net.forward(rows[sel], roles[sel], leg[sel])
            else:
                sub = rows[sel]
                nb.first_layer(sub, sub.shape[0], w0, b0, pre)
                pr, v = net.forward_first(pre[:sub.shape[0]], roles[sel], leg[sel])
            probs[sel] = pr
            # the value is the deciding side's; side 0's view is its sign-flip for side 1 (R7.3: the
            # solo, seat 0, decides for the new moon)
            s0 = np.where(sides[sel] == 0, v, -v).astype(np.float64)
            leaf_value[sel] = (1.0 - lam) * s0 + lam * z[sel]
        nb.backup_batch(m, paths, depths, leaf, need, probs, leaf_value, visits, value, prior, evaluated)
        done += m
    root_visits = visits[0].astype(np.int64)
    acting = int(base[8]) if base[7] == 1 else (int(base[4]) + int(base[6])) & 3
    sign = 1.0 if acting % 2 == 0 else -1.0
    values = np.zeros(31, dtype=np.float64)
    seen = root_visits > 0
    values[seen] = sign * value[0][seen] / root_visits[seen]
    return root_visits, values


class GuidedAgent:
    """Network-guided IS-MCTS (module docstring); plays the most visited legal action.

    Args:
        path: ``"default"`` (the shipped ``agents/weights/policy_{3,4}p.npz``, chosen by the
            deal's number of players), a ``.npz`` of :mod:`twilight_env.agents.nn.numpy_pv`, or an
            expert-iteration checkpoint file / run directory (read with torch).
        iterations: descents per decision (>= 1; None: :data:`VARIANT_DEFAULTS` of the deal's
            variant); batch: descents per forward pass (>= 1).
        c: PUCT constant (>= 0); lam: weight of the heuristic rollout in the leaf value
            ([0, 1]; 0: the network's value alone; None: :data:`VARIANT_DEFAULTS`);
            fpu: first-play reduction (>= 0).
        device: where the leaf batches are evaluated: ``"cpu"`` (the NumPy forward pass, no
            torch) or ``"cuda"`` (the torch network on the GPU, built on first use).

    Raises:
        ValueError: on a bad option or checkpoint (naming it and what is allowed), or
            ``device="cuda"`` without torch or without a usable CUDA device.
    """

    stateless = True
    """Decisions depend only on (information set, legal actions, rng)."""

    def __init__(self, path: str = "default", iterations: int | None = None, batch: int = 32, c: float = 1.0,
                 lam: float | None = None, fpu: float = 0.0, device: str = "cpu"):
        if device not in ("cpu", "cuda"):
            raise ValueError(f"guided option device must be 'cpu' or 'cuda', got {device!r}")
        if device == "cuda":
            _check_cuda()
        self.device = device
        if iterations is not None:
            check_positive_int("iterations", iterations)
        check_positive_int("batch", batch)
        self.c = check_number("c", c, 0, agent="guided")
        self.lam = None if lam is None else check_number("lam", lam, 0, 1, agent="guided")
        self.fpu = check_number("fpu", fpu, 0, agent="guided")
        if not isinstance(path, str) or not path:
            raise ValueError(f"guided: path must be 'default' or an exit checkpoint path, got {path!r}")
        self.path = path
        self.iterations = None if iterations is None else int(iterations)
        self.batch = int(batch)
        self._nets: dict = {}
        self._on_device: dict = {}
        if path != "default":  # load and check the file now, when the agent is built
            try:
                net, npl = numpy_model(path)
            except ValueError as e:
                raise ValueError(f"guided option path={path!r}: {e}") from None
            self._nets[npl] = net
        given = [f"iterations={self.iterations}" if iterations is not None else "",
                 f"batch={self.batch}" if batch != 32 else "", f"c={self.c:g}" if c != 1.0 else "",
                 f"lam={self.lam:g}" if lam is not None else "", f"fpu={self.fpu:g}" if fpu != 0 else "",
                 f"device={device}" if device != "cpu" else ""]
        self.name = ",".join([f"guided:{path}"] + [g for g in given if g])

    @classmethod
    def with_network(cls, net, num_players: int, **options) -> "GuidedAgent":
        """An agent of ``options`` (those of :class:`GuidedAgent`, ``path`` aside) that searches
        the ``num_players`` game with ``net``, a network already built (a
        :class:`twilight_env.agents.nn.numpy_pv.NumpyPolicyValueNet`, e.g. loaded with
        ``keep_subnormal=True``, or an object with its ``forward_first``); the other variant
        reads the shipped weights as ``path="default"`` does.

        Raises:
            ValueError: a bad option, as the constructor, or ``num_players`` not 3 or 4.
        """
        if num_players not in (3, 4):
            raise ValueError(f"guided.with_network: num_players must be 3 or 4, got {num_players!r}")
        agent = cls(**options)
        agent._nets[num_players] = net
        return agent

    @property
    def num_players(self) -> int | None:
        """The variant a weights file was trained for (3 or 4), or None for ``default``,
        which holds both (:func:`twilight_env.agents.base.network_players` reads it)."""
        return None if self.path == "default" else next(iter(self._nets))

    @property
    def tricks(self) -> int:
        """Tricks per deal of the deck the network was trained on (7: the full deck; the
        shipped weights and a file that records no deck), as its ``.npz`` records it (R2.3);
        :func:`twilight_env.agents.base.check_specs` reads it."""
        return min((net.tricks for net in self._nets.values()), default=NUM_TRICKS)

    def reset(self) -> None:
        """Nothing to reset: each decision builds a fresh tree."""

    def net_for(self, num_players: int):
        """The network for a variant, loaded on first use: the NumPy one, or its torch twin on
        the GPU with ``device="cuda"``.

        Raises:
            ValueError: a checkpoint of the other variant, or missing or corrupt weights.
        """
        net = self._nets.get(num_players)
        if net is None:
            if self.path != "default":
                raise ValueError(f"guided checkpoint {self.path!r} was trained for another number of players; "
                                 f"it cannot play a {num_players}-player deal")
            net = self._nets[num_players] = numpy_model("default", num_players)[0]
        if self.device == "cpu":
            return net
        on_device = self._on_device.get(num_players)
        if on_device is None:
            from twilight_env.agents.exit import TorchForward

            on_device = self._on_device[num_players] = TorchForward.from_numpy(net, self.device)
        return on_device

    def search(self, infoset, legal_actions, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """Root visits and values of one search (:func:`search`)."""
        n = infoset.num_players
        iterations = self.iterations if self.iterations is not None else VARIANT_DEFAULTS[n]["iterations"]
        lam = self.lam if self.lam is not None else VARIANT_DEFAULTS[n]["lam"]
        return search(infoset, legal_actions, self.net_for(n), iterations, rng, batch=self.batch, c=self.c,
                      lam=lam, fpu=self.fpu)

    def act(self, infoset, legal_actions, rng: np.random.Generator) -> int:
        """The most visited legal action (lowest id on ties); a forced action without search."""
        if not legal_actions:
            raise ValueError("guided.act needs at least one legal action (the deal may be over)")
        if len(legal_actions) == 1:
            return int(legal_actions[0])
        from twilight_env.agents.fast_ismcts import most_visited

        return most_visited(self.search(infoset, legal_actions, rng)[0], legal_actions)


__all__ = ["GuidedAgent", "search", "numpy_model", "default_weights", "history_masks", "DEFAULT_MAX_NODES",
           "VARIANT_DEFAULTS"]


# The declaration (twilight_env.agents.declaration): read from this source without importing it.
from twilight_env.agents.base import AgentDecl, Option, declare  # noqa: E402

declare(AgentDecl(
    name="guided", factory=GuidedAgent, summary="search guided by the expert-iteration network (NumPy)",
    served=True, searches=True, shipped_weights=True, bare_option="path", family="exit",
    options=(
        Option("path", str, "default", serve=("default",), doc="'default' (shipped) or an exit checkpoint", holds="path"),
        Option("iterations", int, None, low=1, serve=(1, 20000), doc="search iterations (default per variant)"),
        Option("batch", int, 32, low=1, serve=(1, 256), doc="leaves evaluated per network call"),
        Option("c", float, 1.0, low=0, serve=(0.0, 10.0), doc="exploration constant"),
        Option("lam", float, None, low=0, high=1, serve=(0.0, 1.0), doc="value/rollout mix (default per variant)"),
        Option("fpu", float, 0.0, low=0, serve=(0.0, 1.0), doc="first-play urgency reduction"),
        Option("device", str, "cpu", doc="'cpu' or 'cuda'"),
    )))
