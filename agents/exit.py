"""Expert iteration: a policy/value network trained on a search agent's decisions, and the search it guides.

Expert iteration (Anthony, Tian & Barber 2017, "Thinking Fast and Slow with Deep Learning
and Tree Search") alternates an *expert*, a tree search, and an *apprentice*, a network
that imitates it; the apprentice then guides the next expert. Targets as in AlphaZero
(Silver et al. 2018): the policy learns the search's normalised root visit counts, the
value learns the deal's outcome.

:class:`PolicyValueNet`: the information-set features of the ``neural`` agent
(:func:`twilight_env.agents.nn.features.infoset_row`, 25 bit masks of what the deciding seat may know,
R2.5, R7.1; expanded to 700 bits) → shared MLP trunk → per role (``role_of``: 1 in 4
players, 4 in 3 players) a policy head (31 logits, one per action id, illegal actions
masked out, R3.2, R3.5) and a value head (``tanh``, in [-1, 1]). The value is the deciding
side's deal score minus the other side's, divided by 360, at the end of the deal (R5);
the deciding side is the side of the acting seat (a holder decides for its own side, the
solo for the new moon, R7.3), as in ``twilight_env.agents.ismcts``.

Agents (registered, so ``make_agent``, ``twilight arena``, ``twilight edge`` and
``twilight play`` build them by name):

- ``exit`` (``exit:default`` = the network of ``policy:default``, the shipped
  ``agents/weights/policy_{3,4}p.npz`` chosen by the deal's number of players, read with
  torch; or ``exit:PATH``, a checkpoint or an ``.npz`` export): plays the most probable legal action of
  the policy; stateless, with ``act_batch`` (one forward pass for many decisions).
  ``exit:default,temperature=T`` samples ``p(a)^(1/T)`` instead (``T = 1``: the network's
  own policy; :mod:`twilight_env.agents.sampling`) with the generator passed to ``act``;
  :meth:`ExitAgent.action_probs` gives the distribution it plays.
- ``exit-search`` (``exit-search:PATH,iterations=1000,c=0.7,w=1.0,backend=auto``):
  IS-MCTS (Cowling, Powley & Whitehouse 2012) with the policy as a root prior: at the
  root each action's selection score gets the progressive bias ``w · P(a) / (n_a + 1)``
  (Chaslot et al. 2008), ``n_a`` its visits; plays the most visited legal action.

Checkpoints are plain dicts written atomically and read with ``weights_only=True``
(:mod:`twilight_env.agents.nn.checkpoint`):

| key | content |
|-----|---------|
| ``format``, ``version`` | ``"twilight-exit"``, 1 |
| ``num_players`` | 3 or 4 |
| ``net`` | ``PVConfig.to_dict()`` |
| ``model`` | ``state_dict`` of the :class:`PolicyValueNet` |
| ``optimizer``, ``epoch``, ``config``, ``rng``, ``last`` | trainer state (``twilight_env.training.exit``: Adam state, epochs done, data folders and settings, the NumPy shuffling RNG state as JSON, the last epoch's losses; absent in shipped weights) |
| ``git`` | git hash of the code that trained it |
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path

import numpy as np
import torch
from torch import nn

from twilight_env.rules.engine import NUM_ACTIONS, NUM_TRICKS

from twilight_env.agents.base import check_number
from twilight_env.agents.fast_ismcts import most_visited
from twilight_env.agents.ismcts import ISMCTSAgent
from twilight_env.agents.nn.card_encoder import CardPolicyHead, CardSetEncoder
from twilight_env.agents.nn.checkpoint import load_checkpoint
from twilight_env.agents.nn.features import BITS_PER_MASK, NUM_MASKS, STATE_SIZE, infoset_row, num_roles, role_of
from twilight_env.agents.nn.network import NetConfig, mlp
from twilight_env.agents.nn.npz_file import flush_subnormal
from twilight_env.agents.pimc import check_positive_int
from twilight_env.agents.sampling import check_temperature, sample, temperature_suffix, tempered_probs

FORMAT = "twilight-exit"
"""``format`` field of expert-iteration checkpoints."""
VERSION = 1
"""``version`` field this code reads and writes."""
WEIGHTS_DIR = Path(__file__).resolve().parent / "weights"
"""Folder of the shipped weights; ``exit:default`` reads ``policy_3p.npz`` and ``policy_4p.npz``."""
BACKENDS = ("auto", "numba", "python")
"""Search backends of ``exit-search``: the compiled search ``twilight_env.agents.fast_ismcts`` (numba),
the Python ``twilight_env.agents.ismcts`` search, or ``auto`` (compiled when available)."""


def default_weights(num_players: int) -> Path:
    """Path of the shipped weights of ``exit:default`` for 3 or 4 players: the network of
    ``policy:default`` (``policy_{3,4}p.npz``, the torch-free export of an expert-iteration
    checkpoint, which :func:`load_exit_checkpoint` reads)."""
    return WEIGHTS_DIR / f"policy_{num_players}p.npz"


ENCODERS = ("mlp", "cards")
"""Encoders of :class:`PVConfig`."""


@dataclass
class PVConfig(NetConfig):
    """Shape of a :class:`PolicyValueNet`: the fields (``num_roles``, ``trunk``, ``head``)
    and the plain-dict form of :class:`twilight_env.agents.nn.network.NetConfig`, whose trunk and
    per-role head widths it reuses, and the encoder."""

    encoder: str = "mlp"
    """``"mlp"``: the trunk reads the 700 bits; ``"cards"``: the card-set encoder of
    :mod:`twilight_env.agents.nn.card_encoder` (per-card tokens pooled, card-wise policy head)."""
    card_width: int = 64
    """Token width of the ``"cards"`` encoder (units; unused by ``"mlp"``)."""

    def __post_init__(self):
        if self.encoder not in ENCODERS:
            raise ValueError(f"encoder must be one of {ENCODERS}, got {self.encoder!r}")
        if isinstance(self.card_width, bool) or not isinstance(self.card_width, int) or self.card_width < 1:
            raise ValueError(f"card_width must be an integer >= 1, got {self.card_width!r}")

    def to_dict(self) -> dict:
        """Plain dict; an ``"mlp"`` config has the keys of :class:`NetConfig` only (files as before)."""
        d = super().to_dict()
        if self.encoder == "mlp":
            d.pop("encoder"), d.pop("card_width")
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "PVConfig":
        base = NetConfig.from_dict(d)
        return cls(num_roles=base.num_roles, trunk=base.trunk, head=base.head, encoder=d.get("encoder", "mlp"),
                   card_width=int(d.get("card_width", 64)))


_MASKED = -1e9
"""Logit given to illegal actions (probability exactly 0 after softmax in float32)."""


class PolicyValueNet(nn.Module):
    """Policy logits over the 31 action ids and a value in [-1, 1] (module docstring)."""

    def __init__(self, cfg: PVConfig):
        super().__init__()
        if cfg.num_roles not in (1, 4):
            raise ValueError(f"num_roles must be 1 (4 players) or 4 (3 players), got {cfg.num_roles!r}")
        self.cfg = cfg
        state = cfg.trunk[-1]
        if cfg.encoder == "cards":
            self.encoder = CardSetEncoder(cfg.card_width, cfg.trunk)
            self.policy_heads = nn.ModuleList(CardPolicyHead(cfg.card_width, state, cfg.head)
                                              for _ in range(cfg.num_roles))
        else:
            self.trunk = mlp((STATE_SIZE, *cfg.trunk), final_act=True)
            self.policy_heads = nn.ModuleList(mlp((state, *cfg.head, NUM_ACTIONS), final_act=False)
                                              for _ in range(cfg.num_roles))
        self.value_heads = nn.ModuleList(mlp((state, *cfg.head, 1), final_act=False)
                                         for _ in range(cfg.num_roles))
        self.register_buffer("shifts", torch.arange(BITS_PER_MASK, dtype=torch.int64), persistent=False)

    def forward(self, rows: torch.Tensor, roles: torch.Tensor, legal: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Masked policy logits and values of a batch of decisions.

        Args:
            rows: ``(B, 25)`` int64 compact rows (``twilight_env.agents.nn.features``).
            roles: ``(B,)`` int64 head per decision (``role_of``).
            legal: ``(B, 31)`` bool, True for the legal actions (at least one per row).

        Returns:
            ``logits`` ``(B, 31)`` float32 with illegal actions at -1e9 (softmax gives them
            probability 0), and ``value`` ``(B,)`` float32 in [-1, 1] (deal points / 360
            from the deciding side's view, R5).
        """
        bits = ((rows.unsqueeze(-1) >> self.shifts) & 1).float()
        if self.cfg.encoder == "cards":
            h, tokens = self.encoder(bits)
        else:
            h, tokens = self.trunk(bits.reshape(rows.shape[0], NUM_MASKS * BITS_PER_MASK)), None
        if len(self.policy_heads) == 1:
            logits = self._policy(0, h, tokens)
            value = self.value_heads[0](h).squeeze(1)
        else:
            logits = h.new_empty((h.shape[0], NUM_ACTIONS))
            value = h.new_empty((h.shape[0],))
            for r in range(len(self.policy_heads)):
                idx = (roles == r).nonzero(as_tuple=True)[0]
                if idx.numel():
                    hr = h.index_select(0, idx)
                    logits[idx] = self._policy(r, hr, None if tokens is None else tokens.index_select(0, idx))
                    value[idx] = self.value_heads[r](hr).squeeze(1)
        return logits.masked_fill(~legal, _MASKED), torch.tanh(value)

    def _policy(self, role: int, h: torch.Tensor, tokens: torch.Tensor | None) -> torch.Tensor:
        """Unmasked logits ``(B, 31)`` of head ``role`` (card tokens only with the ``"cards"`` encoder)."""
        head = self.policy_heads[role]
        return head(h) if tokens is None else head(h, tokens)


def legal_mask(legal_actions) -> np.ndarray:
    """``(31,)`` bool mask of a tuple of legal action ids."""
    m = np.zeros(NUM_ACTIONS, dtype=bool)
    m[list(legal_actions)] = True
    return m


@torch.no_grad()
def policy_value(model: PolicyValueNet, infosets, legal_actions_list) -> tuple[np.ndarray, np.ndarray]:
    """Policy and value of decisions, in one forward pass.

    Args:
        model: a :class:`PolicyValueNet` for the decisions' number of players.
        infosets: information sets whose viewer is to act.
        legal_actions_list: the legal action ids of each (non-empty).

    Returns:
        ``probs`` ``(B, 31)`` float32 (0 on illegal actions, rows sum to 1) and ``values``
        ``(B,)`` float32 in [-1, 1].

    Raises:
        ValueError: on a decision without legal actions.
    """
    if any(len(legal) == 0 for legal in legal_actions_list):
        raise ValueError("exit: a decision has no legal action (the deal is over?)")
    rows = torch.tensor([infoset_row(i) for i in infosets], dtype=torch.int64)
    roles = torch.tensor([role_of(i.num_players, i.acting_seat) for i in infosets], dtype=torch.int64)
    legal = torch.from_numpy(np.stack([legal_mask(a) for a in legal_actions_list]))
    logits, value = model(rows, roles, legal)
    return torch.softmax(logits, dim=1).numpy(), value.numpy()


class TorchForward:
    """The ``forward(rows, roles, legal)`` of :class:`~twilight_env.agents.nn.numpy_pv.NumpyPolicyValueNet`
    computed by the torch :class:`PolicyValueNet` on a device (``guided:...,device=cuda``):
    NumPy in, NumPy out, one copy to the device and one back per batch.

    Args:
        model: the network (moved to ``device`` and put in eval mode).
        device: a torch device name (``"cpu"``, ``"cuda"``).
    """

    def __init__(self, model: PolicyValueNet, device: str):
        self.device = torch.device(device)
        self.model = model.to(self.device).eval()

    @classmethod
    def from_numpy(cls, net, device: str) -> "TorchForward":
        """The torch twin of a :class:`~twilight_env.agents.nn.numpy_pv.NumpyPolicyValueNet` (same
        weights, the subnormal ones set to 0 as the NumPy forward pass plays them unless it keeps
        them: its ``keep_subnormal``, :func:`~twilight_env.agents.nn.npz_file.flush_subnormal`)."""
        flush = (lambda a: a) if getattr(net, "keep_subnormal", False) else flush_subnormal
        model = PolicyValueNet(PVConfig.from_dict(net.net))
        model.load_state_dict({k: torch.from_numpy(flush(np.array(v, dtype=np.float32))) for k, v in net.params.items()})
        return cls(model, device)

    @torch.no_grad()
    def forward(self, rows: np.ndarray, roles: np.ndarray, legal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`NumpyPolicyValueNet.forward <twilight_env.agents.nn.numpy_pv.NumpyPolicyValueNet.forward>`
        (the same arguments, shapes and dtypes; equal within float32 tolerance), on the device."""
        t = [torch.from_numpy(np.ascontiguousarray(x, dtype=d)).to(self.device)
             for x, d in ((rows, np.int64), (roles, np.int64), (legal, np.bool_))]
        logits, value = self.model(*t)
        return torch.softmax(logits, dim=1).cpu().numpy(), value.cpu().numpy()


def new_checkpoint(model: PolicyValueNet, num_players: int, **extra) -> dict:
    """Checkpoint dict (module table) of a model; ``extra`` adds trainer keys."""
    return {"format": FORMAT, "version": VERSION, "num_players": int(num_players), "net": model.cfg.to_dict(),
            "model": {k: v.detach().cpu() for k, v in model.state_dict().items()}, **extra}


def load_exit_checkpoint(path, num_players: int | None = None) -> dict:
    """Load and check an expert-iteration checkpoint (``weights_only=True``).

    Args:
        path: a checkpoint file, a run directory holding ``checkpoint.pt``, or an ``.npz``
            export (``twilight-exit-npz``, :mod:`twilight_env.agents.nn.numpy_pv`; the shipped weights).
        num_players: if given, the variant the caller needs.

    Raises:
        ValueError: naming the file, if it is missing, corrupt, not a ``twilight-exit``
            checkpoint, or for another number of players.
    """
    return load_checkpoint(path, num_players, fmt=FORMAT, version=VERSION, kind="exit",
                           writer="`python -m twilight_env.training.exit train`")


def model_from_exit_checkpoint(ckpt: dict, path: str = "checkpoint") -> PolicyValueNet:
    """Build the network stored in a checkpoint dict (in eval mode).

    Raises:
        ValueError: if the weights do not fit the stored shape or the number of players.
    """
    try:
        cfg = PVConfig.from_dict(ckpt["net"])
        model = PolicyValueNet(cfg)
        model.load_state_dict({k: v.float() for k, v in ckpt["model"].items()})
    except (KeyError, TypeError, RuntimeError, AttributeError, ValueError) as e:
        raise ValueError(f"exit checkpoint {path!r} has weights that do not fit its network: "
                         f"{type(e).__name__}: {str(e)[:200]}") from None
    if cfg.num_roles != num_roles(ckpt["num_players"]):
        raise ValueError(f"exit checkpoint {path!r}: {cfg.num_roles} heads for {ckpt['num_players']} players "
                         f"(expected {num_roles(ckpt['num_players'])})")
    for p in model.parameters():
        p.requires_grad_(False)
    return model.eval()


_MODEL_CACHE: dict = {}


def load_model(path, num_players: int | None = None) -> tuple[PolicyValueNet, int]:
    """Model and number of players of a checkpoint, cached per (path, mtime, size), for play:
    its subnormal weights set to 0 (:func:`~twilight_env.agents.nn.npz_file.flush_subnormal`;
    the same play, several times faster on a CPU).

    Raises:
        ValueError: as :func:`load_exit_checkpoint`.
    """
    path = Path(path)
    try:
        st = (path / "checkpoint.pt" if path.is_dir() else path).stat()
        key = (str(path.resolve()), st.st_mtime_ns, st.st_size)
    except OSError:
        key = None
    if key is None or key not in _MODEL_CACHE:
        ckpt = load_exit_checkpoint(path, num_players)
        model = model_from_exit_checkpoint(ckpt, str(path))
        with torch.no_grad():
            for p in model.parameters():
                flush_subnormal(p.numpy())  # the tensor's own memory, in place
        if key is None:
            return model, ckpt["num_players"]
        _MODEL_CACHE[key] = (model, ckpt["num_players"])
    model, npl = _MODEL_CACHE[key]
    if num_players is not None and npl != num_players:
        raise ValueError(f"exit checkpoint {str(path)!r} was trained for {npl} players, "
                         f"but a {num_players}-player network is needed")
    return model, npl


class _Models:
    """The network(s) of a ``path`` option: one checkpoint, or the shipped weights per variant."""

    def __init__(self, path: str, threads: int | None):
        if not isinstance(path, str) or not path:
            raise ValueError(f"exit: path must be 'default' or a checkpoint path, got {path!r}")
        if threads is not None:
            check_positive_int("threads", threads)
            torch.set_num_threads(int(threads))
        self.path = path
        self.models: dict[int, PolicyValueNet] = {}
        self.num_players = None
        if path != "default":  # the file is loaded and checked now, when the agent is built
            try:
                model, self.num_players = load_model(path)
            except ValueError as e:
                raise ValueError(f"exit option path={path!r}: {e}") from None
            self.models[self.num_players] = model

    @cached_property
    def tricks(self) -> int:
        """Tricks per deal of the deck the network was trained on (7: the full deck): an
        ``.npz`` records it (an MMD run's ``policy.npz``, R2.3; read once, when a check first
        asks); the shipped weights and a torch checkpoint are full-deck networks."""
        if self.path == "default" or not self.path.endswith(".npz"):
            return NUM_TRICKS
        from twilight_env.agents.nn.npz_file import read_weights_npz

        meta, _ = read_weights_npz(self.path, "exit weights")
        return int(meta.get("tricks", NUM_TRICKS)) if isinstance(meta, dict) else NUM_TRICKS

    def get(self, num_players: int) -> PolicyValueNet:
        model = self.models.get(num_players)
        if model is not None:
            return model
        if self.path != "default":
            raise ValueError(f"exit checkpoint {self.path!r} was trained for {self.num_players} players; "
                             f"it cannot play a {num_players}-player deal")
        weights = default_weights(num_players)
        if not weights.is_file():
            raise ValueError(f"exit:default needs the shipped weights {str(weights)!r}, which do not exist; "
                             f"train them with `python -m twilight_env.training.exit` (training/README.md) or give exit:PATH")
        model, _ = load_model(weights, num_players)
        self.models[num_players] = model
        return model


class _NetworkFacts:
    """What :func:`twilight_env.agents.base.check_specs` reads of an agent holding its network(s)
    in ``self._models`` (:class:`_Models`): ``num_players`` and ``tricks``."""

    _models: _Models

    @property
    def num_players(self) -> int | None:
        """The variant a checkpoint was trained for (3 or 4), or None for ``default``, which
        holds both (:func:`twilight_env.agents.base.network_players` reads it)."""
        return self._models.num_players

    @property
    def tricks(self) -> int:
        """Tricks per deal of the deck the network was trained on (7: the full deck, R2.3)."""
        return self._models.tricks


class ExitAgent(_NetworkFacts):
    """The policy network's most probable legal action, or a sample of its policy (module docstring).

    Args:
        path: ``"default"`` (shipped weights per number of players) or a checkpoint file /
            run directory written by ``python -m twilight_env.training.exit train``.
        threads: torch intra-op threads in this process (None leaves torch's setting).
        temperature: 0 (greedy, the default) or ``T`` in ``(0, 100]``: sample ``p^(1/T)``.

    Raises:
        ValueError: missing, corrupt or mismatched checkpoint (naming the file), or a
            temperature outside ``[0, 100]``.
    """

    stateless = True
    """Decisions depend only on (information set, legal actions, rng): one instance may play
    many deals at once (``twilight_env.experiments.common.play_lockstep``)."""

    def __init__(self, path: str = "default", threads: int | None = 1, temperature: float = 0.0):
        self.temperature = check_temperature(temperature, "exit")
        self._models = _Models(path, threads)
        self.path = path
        self.name = "exit" if path == "default" else f"exit:{path}"
        if self.temperature:
            self.name = f"exit:{path}{temperature_suffix(self.temperature)}"

    def model_for(self, num_players: int) -> PolicyValueNet:
        """The network for a variant, loaded on first use (as ``neural``'s ``model_for``).

        Raises:
            ValueError: a checkpoint of the other variant, or missing or corrupt weights.
        """
        return self._models.get(num_players)

    def reset(self) -> None:
        """Nothing to reset: the policy keeps no state between decisions."""

    def action_probs(self, infoset, legal_actions) -> np.ndarray:
        """The distribution this agent plays at a decision.

        Returns:
            ``(31,)`` float64 by action id: 0 outside ``legal_actions``, summing to 1; at
            temperature 0 all mass on the action :meth:`act` plays.

        Raises:
            ValueError: no legal action.
        """
        return self.action_probs_batch([infoset], [legal_actions])[0]

    def action_probs_batch(self, infosets, legal_actions_list) -> np.ndarray:
        """:meth:`action_probs` of many decisions: ``(B, 31)`` float64, one forward pass per
        number of players.

        Raises:
            ValueError: a decision without legal actions.
        """
        out = np.zeros((len(infosets), NUM_ACTIONS), dtype=np.float64)
        for idx, probs in self._policy_groups(infosets, legal_actions_list):
            legal = np.stack([legal_mask(legal_actions_list[i]) for i in idx])
            out[idx] = tempered_probs(probs, legal, self.temperature)
        return out

    def _policy_groups(self, infosets, legal_actions_list):
        """The network's policy for many decisions, one forward pass per number of players:
        yields ``(idx, probs)``, ``idx`` the decisions' positions in the lists and ``probs``
        ``(len(idx), 31)``."""
        by_npl: dict[int, list[int]] = {}
        for i, info in enumerate(infosets):
            by_npl.setdefault(info.num_players, []).append(i)
        for npl, idx in by_npl.items():
            probs, _ = policy_value(self._models.get(npl), [infosets[i] for i in idx],
                                    [legal_actions_list[i] for i in idx])
            yield idx, probs

    def act(self, infoset, legal_actions, rng: np.random.Generator) -> int:
        """The legal action of highest policy probability (lowest id on ties) at temperature
        0; at ``T > 0`` a draw from :meth:`action_probs` with one uniform number of ``rng``.

        Raises:
            ValueError: no legal action, or ``rng`` None at ``T > 0``.
        """
        if self.temperature:
            if not legal_actions:
                raise ValueError("exit: a decision has no legal action (the deal is over?)")
            return int(sample(self.action_probs(infoset, legal_actions)[None], rng)[0])
        return self.greedy_batch([infoset], [legal_actions])[0]

    @property
    def act_batch(self):
        """Greedy actions for many decisions (:meth:`greedy_batch`); present only at
        temperature 0 (``hasattr`` is False otherwise: a sampled decision needs the generator
        passed to ``act``, and batch callers then decide one by one)."""
        if self.temperature:
            raise AttributeError("act_batch: a sampled exit agent (temperature > 0) decides with act(..., rng)")
        return self.greedy_batch

    def greedy_batch(self, infosets, legal_actions_list) -> list[int]:
        """Greedy actions for many decisions, one forward pass per number of players."""
        out: list = [None] * len(infosets)
        for idx, probs in self._policy_groups(infosets, legal_actions_list):
            for k, i in enumerate(idx):
                legal = sorted(int(a) for a in legal_actions_list[i])
                out[i] = max(legal, key=lambda a, p=probs[k]: (p[a], -a))
        return out


@lru_cache(maxsize=8)
def _python_searcher(iterations: int, c: float, rollout_backend: str) -> ISMCTSAgent:
    return ISMCTSAgent(iterations=iterations, c=c, rollout_backend=rollout_backend)


def _fast_search():
    """``twilight_env.agents.fast_ismcts.search``, or None when that module or numba is missing."""
    try:
        from twilight_env.agents.fast_ismcts import search
        from twilight_env.agents.fast_rollout import HAVE_NUMBA
    except ImportError:
        return None
    return search if HAVE_NUMBA else None


def resolve_backend(backend: str) -> str:
    """``"numba"`` or ``"python"`` for a search backend option.

    Raises:
        ValueError: an unknown backend, or ``numba`` when the compiled search (numba) is missing.
    """
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    if backend == "python":
        return "python"
    if _fast_search() is None:
        if backend == "numba":
            raise ValueError("backend=numba needs the compiled search twilight_env.agents.fast_ismcts and the numba package "
                             "(pip install 'twilight-env[fast]'); install it or use backend=python")
        return "python"
    return "numba"


def root_search(infoset, iterations: int, c: float, rng: np.random.Generator, root_prior=None,
                prior_weight: float = 0.0, backend: str = "auto",
                rollout_backend: str = "auto") -> tuple[np.ndarray, np.ndarray]:
    """One IS-MCTS search from an information set; its root statistics.

    Args:
        infoset: the deciding seat's information set.
        iterations: determinizations (>= 1). c: UCT constant (>= 0).
        rng: randomness of the search.
        root_prior: ``(31,)`` prior probabilities of the root actions, or None.
        prior_weight: ``w`` of the root progressive bias ``w · P(a) / (n_a + 1)``.
        backend: ``"auto"``, ``"numba"`` (``twilight_env.agents.fast_ismcts.search``) or ``"python"``.
        rollout_backend: the Python search's heuristic rollout backend (``twilight_env.agents.ismcts``).

    Returns:
        ``visits`` ``(31,)`` int64 root visits per action id, and ``values`` ``(31,)``
        float64 mean outcome (deal points / 360, R5) from the root decider's side (0 where
        unvisited).
    """
    if resolve_backend(backend) == "numba":
        visits, values = _fast_search()(infoset, iterations, c, rng, root_prior=root_prior, prior_weight=prior_weight)
        return np.asarray(visits, dtype=np.int64), np.asarray(values, dtype=np.float64)
    root = _python_searcher(int(iterations), float(c), rollout_backend).search(infoset, rng, root_prior=root_prior, prior_weight=prior_weight)
    visits = np.zeros(NUM_ACTIONS, dtype=np.int64)
    values = np.zeros(NUM_ACTIONS, dtype=np.float64)
    sign = 1.0 if not (infoset.acting_seat & 1) else -1.0
    for a, n in root.visits.items():
        visits[a] = n
        if n:
            values[a] = sign * root.value[a] / n
    return visits, values


class ExitSearchAgent(_NetworkFacts):
    """IS-MCTS with the policy network as a root prior (module docstring).

    Args:
        path: ``"default"`` or a checkpoint file / run directory (as for ``exit``).
        iterations: determinizations per decision (>= 1).
        c: UCT exploration constant (>= 0), values in [-1, 1].
        w: weight of the root progressive bias ``w · P(a) / (n_a + 1)`` (>= 0; 0 is plain IS-MCTS).
        backend: ``"auto"``, ``"numba"`` or ``"python"`` (:func:`resolve_backend`).
        rollout_backend: heuristic rollout backend of the Python search.
        threads: torch intra-op threads (None leaves torch's setting).

    Raises:
        ValueError: on a bad option or checkpoint (naming it and what is allowed).
    """

    stateless = True
    """Decisions depend only on (information set, legal actions, rng)."""

    def __init__(self, path: str = "default", iterations: int = 1000, c: float = 0.7, w: float = 1.0,
                 backend: str = "auto", rollout_backend: str = "auto", threads: int | None = 1):
        check_positive_int("iterations", iterations)
        for name, v in (("c", c), ("w", w)):
            check_number(name, v, 0, agent="exit-search")
        resolve_backend(backend)
        self._models = _Models(path, threads)
        self.path = path
        self.iterations = iterations
        self.c = float(c)
        self.w = float(w)
        self.backend = backend
        self.rollout_backend = rollout_backend
        self.name = f"exit-search:{path},iterations={iterations},w={w:g}"

    def reset(self) -> None:
        """Nothing to reset: each decision builds a fresh tree."""

    def model_for(self, num_players: int) -> PolicyValueNet:
        """The network for a variant, loaded on first use (see :meth:`ExitAgent.model_for`)."""
        return self._models.get(num_players)

    def search(self, infoset, legal_actions, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """Root visits ``(31,)`` int64 and mean values ``(31,)`` float64 of one prior-guided search."""
        prior, _ = policy_value(self._models.get(infoset.num_players), [infoset], [legal_actions])
        return root_search(infoset, self.iterations, self.c, rng, root_prior=prior[0].astype(np.float64),
                           prior_weight=self.w, backend=self.backend, rollout_backend=self.rollout_backend)

    def act(self, infoset, legal_actions, rng: np.random.Generator) -> int:
        """The most visited legal action (lowest id on ties); a forced action without search."""
        if not legal_actions:
            raise ValueError("exit-search.act needs at least one legal action (the deal may be over)")
        if len(legal_actions) == 1:
            return int(legal_actions[0])
        visits, _ = self.search(infoset, legal_actions, rng)
        return most_visited(visits, legal_actions)


__all__ = ["FORMAT", "VERSION", "PVConfig", "PolicyValueNet", "TorchForward", "policy_value", "legal_mask", "new_checkpoint",
           "load_exit_checkpoint", "model_from_exit_checkpoint", "load_model", "root_search", "most_visited",
           "resolve_backend", "default_weights", "ExitAgent", "ExitSearchAgent"]


# The declaration (twilight_env.agents.declaration): read from this source without importing it.
from twilight_env.agents.base import AgentDecl, Option, declare  # noqa: E402

declare(
    AgentDecl(
        name="exit", factory=ExitAgent, summary="the expert-iteration network read with torch, greedy or sampled",
        served=True, needs="torch", shipped_weights=True, bare_option="path", exact_target=True, family="exit",
        replaced_by="policy",
        options=(
            Option("path", str, "default", serve=("default",), doc="'default' (shipped), a checkpoint or .npz", holds="path"),
            Option("threads", int, 1, low=1, doc="torch threads"),
            Option("temperature", float, 0.0, low=0, high=100, doc="0: greedy; above 0: sampled"),
        )),
    AgentDecl(
        name="exit-search", factory=ExitSearchAgent, summary="ISMCTS with the expert-iteration network's prior (torch)",
        served=True, needs="torch", searches=True, shipped_weights=True, bare_option="path", family="exit",
        replaced_by="guided",
        options=(
            Option("path", str, "default", serve=("default",), doc="'default' (shipped), a checkpoint or .npz", holds="path"),
            Option("iterations", int, 1000, low=1, serve=(1, 20000), doc="search iterations per decision"),
            Option("c", float, 0.7, low=0, serve=(0.0, 10.0), doc="exploration constant"),
            Option("w", float, 1.0, low=0, serve=(0.0, 100.0), doc="weight of the network's prior"),
            Option("backend", str, "auto", serve=("auto", "numba", "python"), doc="tree search backend"),
            Option("rollout_backend", str, "auto", serve=("auto", "numba", "python"), doc="rollout backend"),
            Option("threads", int, 1, low=1, doc="torch threads"),
        )))
