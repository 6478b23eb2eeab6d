"""``neural``: the greedy policy of a Deep Monte-Carlo Q-network trained by ``twilight train``.

Spec: ``neural`` or ``neural:default`` loads the shipped weights,
``agents/weights/neural_4p`` or ``neural_3p`` chosen by the information set's number of
players; ``neural:path=RUN/checkpoint.pt`` (or ``neural:RUN/checkpoint.pt``, or a run
directory) loads a training checkpoint, and ``neural:path=FILE.npz`` a NumPy export.
Checkpoints are read with ``torch.load(..., weights_only=True)``; ``.npz`` files with
``numpy.load(..., allow_pickle=False)``.

Backends (``backend=``): ``torch`` scores with :class:`twilight_env.agents.nn.network.QNetwork`;
``numpy`` with :class:`twilight_env.agents.nn.numpy_net.NumpyQNetwork`, the same function in NumPy
(equal within float32 tolerance, ``tests/training/test_numpy_net.py``), which needs no
torch and is faster for the single decisions of play; ``auto`` (the default) takes
``torch`` when it is installed (the figures in the docs were measured with it), else
``numpy`` for the shipped weights; other ``.npz`` files play with ``numpy`` unless
``backend=torch`` is given. The shipped weights are one ``.npz`` per variant
(``neural_{3,4}p.npz``, exported from the training checkpoint with ``python -m
twilight_env.agents.nn.numpy_net CKPT OUT.npz``), which the torch backend reads too.

At a decision the agent builds the DMC features of its information set
(``twilight_env.agents.nn.features``, only what the seat may know: R2.5, R7.1), scores every legal
action in one forward pass and plays the best one; it never considers an action
outside ``legal_actions`` (R3.2, R3.5). :meth:`NeuralAgent.act_batch` scores many
decisions in one pass.

Sampling: ``neural:default,temperature=T`` (0 by default: the greedy play above) samples
the Boltzmann distribution ``exp(q(a) / T)`` over the legal actions, ``T`` in the
Q-values' unit (deal points / 360; :mod:`twilight_env.agents.sampling`), with the generator
passed to ``act``; :meth:`NeuralAgent.action_probs` gives the distribution it plays.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from twilight_env.agents.nn.features import infoset_row, role_of
from twilight_env.agents.sampling import boltzmann, check_temperature, sample, temperature_suffix

WEIGHTS_DIR = Path(__file__).resolve().parent / "weights"
"""Folder of the shipped weights ``neural_{3,4}p.npz`` (read by both backends)."""

BACKENDS = ("auto", "torch", "numpy")
TORCH_HINT = "install the train extra (pip install torch==2.13.0 && pip install -e \".[train]\")"

_MODEL_CACHE: dict = {}


def default_weights(num_players: int, backend: str = "torch") -> Path:
    """Path of the shipped weights for 3 or 4 players: ``neural_{3,4}p.npz``, which both backends
    read (``backend`` is accepted for older callers and does not change the file)."""
    return WEIGHTS_DIR / f"neural_{num_players}p.npz"


def _torch_available() -> bool:
    """Whether torch imports here (it is imported once, as the torch backend needs it anyway)."""
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def _load(path: Path, num_players: int | None, backend: str = "torch"):
    """Model and variant of a checkpoint (torch) or an ``.npz`` export (numpy), cached per
    (path, mtime, size, backend)."""
    try:
        st = path.stat()
        key = (str(path.resolve()), st.st_mtime_ns, st.st_size, backend)
    except OSError:
        key = None
    if key is not None and key in _MODEL_CACHE:
        model, npl = _MODEL_CACHE[key]
        if num_players is not None and npl != num_players:
            raise ValueError(f"checkpoint {str(path)!r} was trained for {npl} players, "
                             f"but a {num_players}-player network is needed")
        return model, npl
    if backend == "numpy":
        from twilight_env.agents.nn.numpy_net import load_npz
        model = load_npz(path, num_players)
        npl = model.num_players
    else:
        from twilight_env.agents.nn.checkpoint import load_checkpoint, model_from_checkpoint
        ckpt = load_checkpoint(path, num_players)
        model = model_from_checkpoint(ckpt, str(path))
        for p in model.parameters():
            p.requires_grad_(False)
        npl = ckpt["num_players"]
    if key is not None:
        _MODEL_CACHE[key] = (model, npl)
    return model, npl


def _backend_for(path: str, backend: str) -> str:
    """The backend that plays ``path`` (see the module docstring).

    Raises:
        ValueError: an unknown backend, a ``.pt`` checkpoint for numpy, or torch asked for
            and not installed (naming the train extra).
    """
    if backend not in BACKENDS:
        raise ValueError(f"neural option backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    npz = path.endswith(".npz")
    if backend == "auto":
        backend = "numpy" if npz or (path == "default" and not _torch_available()) else "torch"
    if backend == "numpy" and path != "default" and not npz:
        raise ValueError(f"neural option path={path!r}: backend=numpy reads .npz weights; export a torch "
                         f"checkpoint with `python -m twilight_env.agents.nn.numpy_net {path} OUT.npz`, or use backend=torch")
    if backend == "torch":
        if not _torch_available():
            raise ValueError(f"neural with backend=torch (and any .pt checkpoint) needs torch: {TORCH_HINT}; "
                             "the shipped weights also play without torch (neural:default, backend=numpy)")
    return backend


class NeuralAgent:
    """Greedy DMC policy (see the module docstring).

    Args:
        path: ``"default"`` for the shipped weights, a checkpoint file / run directory
            (torch), or an ``.npz`` export (numpy).
        threads: torch intra-op threads to use in this process (None leaves torch's
            setting; the numpy backend leaves NumPy's).
        backend: ``"auto"``, ``"torch"`` or ``"numpy"`` (module docstring).
        temperature: 0 (greedy, the default) or ``T`` in ``(0, 100]`` deal points / 360:
            sample ``exp(q / T)``.

    Raises:
        ValueError: if the checkpoint is missing, corrupt, or for the other number of
            players (for ``default``: when the first decision of that variant is made),
            the backend cannot play it (torch missing, or the other file kind), or a
            temperature outside ``[0, 100]``.
    """

    stateless = True
    """Decisions depend only on (information set, legal actions, rng): one instance may
    play many deals at once (``twilight_env.experiments.common.play_lockstep``)."""

    def __init__(self, path: str = "default", threads: int | None = 1, backend: str = "auto",
                 temperature: float = 0.0):
        if not isinstance(path, str) or not path:
            raise ValueError(f"neural: path must be 'default' or a checkpoint path, got {path!r}")
        self.temperature = check_temperature(temperature, "neural")
        self.path = path
        self.backend = _backend_for(path, backend)
        self.name = "neural" if path == "default" else f"neural:{path}"
        if self.temperature:
            self.name = f"neural:{path}{temperature_suffix(self.temperature)}"
        if threads is not None and self.backend == "torch":
            import torch
            torch.set_num_threads(int(threads))
        self._models: dict[int, object] = {}
        if path != "default":  # the file is loaded and checked now, when the agent is built
            try:
                model, npl = _load(Path(path), None, self.backend)
            except ValueError as e:
                raise ValueError(f"neural option path={path!r}: {e}") from None
            self._models[npl] = model
            self.num_players = npl
        else:
            self.num_players = None

    def model_for(self, num_players: int):
        """The network for a variant (loads the shipped weights on first use).

        Raises:
            ValueError: if this agent's checkpoint is for the other variant, or the file is
                missing or corrupt.
        """
        model = self._models.get(num_players)
        if model is not None:
            return model
        if self.path != "default":
            raise ValueError(f"neural checkpoint {self.path!r} was trained for {self.num_players} players; "
                             f"it cannot play a {num_players}-player deal")
        model, _ = _load(default_weights(num_players, self.backend), num_players, self.backend)
        self._models[num_players] = model
        return model

    def act(self, infoset, legal_actions, rng: np.random.Generator) -> int:
        """The legal action with the highest Q-value (first one on ties) at temperature 0; at
        ``T > 0`` a draw from :meth:`action_probs` with one uniform number of ``rng``.

        Raises:
            ValueError: no legal action, or ``rng`` None at ``T > 0``.
        """
        if self.temperature:
            return int(sample(self.action_probs(infoset, legal_actions)[None], rng)[0])
        return self.greedy_batch([infoset], [legal_actions])[0]

    def action_probs(self, infoset, legal_actions) -> np.ndarray:
        """The distribution this agent plays at a decision (module docstring).

        Returns:
            ``(31,)`` float64 by action id: 0 outside ``legal_actions``, summing to 1; at
            temperature 0 all mass on the action :meth:`act` plays.

        Raises:
            ValueError: no legal action, or an information set whose viewer is not to act.
        """
        return self.action_probs_batch([infoset], [legal_actions])[0]

    def action_probs_batch(self, infosets, legal_actions_list) -> np.ndarray:
        """:meth:`action_probs` of many decisions: ``(B, 31)`` float64, one forward pass per variant.

        Raises:
            ValueError: a decision without legal actions.
        """
        qs = self.q_values(infosets, legal_actions_list)
        q = np.zeros((len(infosets), 31), dtype=np.float64)
        legal = np.zeros((len(infosets), 31), dtype=bool)
        for i, (qi, la) in enumerate(zip(qs, legal_actions_list)):
            la = [int(a) for a in la]
            q[i, la] = qi
            legal[i, la] = True
        return boltzmann(q, legal, self.temperature)

    def q_values(self, infosets, legal_actions_list) -> list[list[float]]:
        """Q-values (deal points / 360) of each decision's legal actions, one forward pass per variant.

        Raises:
            ValueError: on a decision with no legal action, or an information set whose
                viewer is not to act.
        """
        out: list = [None] * len(infosets)
        by_npl: dict[int, list[int]] = {}
        for i, (info, legal) in enumerate(zip(infosets, legal_actions_list)):
            if not legal:
                raise ValueError("neural: no legal action given (the deal is over?)")
            by_npl.setdefault(info.num_players, []).append(i)
        for npl, idx in by_npl.items():
            model = self.model_for(npl)
            rows = [infoset_row(infosets[i]) for i in idx]
            roles = [role_of(npl, infosets[i].acting_seat) for i in idx]
            legals = [tuple(int(a) for a in legal_actions_list[i]) for i in idx]
            if self.backend == "numpy":
                qs = model.score_decisions(rows, roles, legals)
            else:
                from twilight_env.agents.nn.network import score_decisions
                qs = score_decisions(model, rows, roles, legals, "cpu")
            for i, q in zip(idx, qs):
                out[i] = q
        return out

    @property
    def act_batch(self):
        """Greedy actions for many decisions (:meth:`greedy_batch`); present only at
        temperature 0 (``hasattr`` is False otherwise: a sampled decision needs the generator
        passed to ``act``, and batch callers then decide one by one)."""
        if self.temperature:
            raise AttributeError("act_batch: a sampled neural agent (temperature > 0) decides with act(..., rng)")
        return self.greedy_batch

    def greedy_batch(self, infosets, legal_actions_list) -> list[int]:
        """Greedy actions for many decisions at once; each is one of its legal actions."""
        qs = self.q_values(infosets, legal_actions_list)
        actions = []
        for q, legal in zip(qs, legal_actions_list):
            best = max(range(len(q)), key=q.__getitem__)
            actions.append(int(legal[best]))
        return actions

    def reset(self) -> None:
        """Nothing to reset: the policy keeps no state between decisions."""


# The declaration (twilight_env.agents.declaration): read from this source without importing it.
from twilight_env.agents.base import AgentDecl, Option, declare  # noqa: E402

declare(AgentDecl(
    name="neural", factory=NeuralAgent, summary="the Deep Monte Carlo network, greedy or sampled",
    served=True, shipped_weights=True, bare_option="path", exact_target=True, family="dmc",
    options=(
        Option("path", str, "default", serve=("default",), doc="'default' (shipped), a checkpoint, run folder or .npz", holds="path"),
        Option("threads", int, 1, low=1, doc="torch threads"),
        Option("backend", str, "auto", doc="'auto', 'torch' or 'numpy'"),
        Option("temperature", float, 0.0, low=0, high=100, doc="0: greedy; above 0: sampled"),
    )))
