"""``nfsp``: the average policy of Neural Fictitious Self-Play, played with NumPy (no torch).

NFSP (Heinrich & Silver 2016, "Deep Reinforcement Learning from Self-Play in
Imperfect-Information Games") trains two networks per game: a best response by
Q-learning, and an *average policy* by supervised learning on the best response's own
past actions; the average policy is what approaches a Nash equilibrium. This agent plays
that average policy, a distribution over the legal actions (R3.2, R3.5): it samples from
it by default (``temperature=1``, the trained mixed strategy), or plays its most probable
action at ``temperature=0`` (lowest id on ties), or a sharpened / flattened version
(``p(a)^(1/T)``, :mod:`twilight_env.agents.sampling`); :meth:`NfspAgent.action_probs`
gives the distribution it plays.

Input: the env observation of the deciding seat's information set
(:func:`twilight_env.obs.encoding.encode_infoset`, ``OBS_SIZE`` float32; only what that seat
may know, R2.5, R7.1), with the match fields (``MATCH``, ``TOTALS``, ``TARGET``) set to 0 as
in the deal episodes the network was trained on. Network: an MLP (ReLU between layers)
from the observation to 31 logits, softmax over the legal actions.

Weights: the ``.npz`` written by ``python -m twilight_env.training.nfsp`` (``avg_policy.npz``
in its run folder): arrays ``w0, b0, w1, b1, ...`` (``w_k`` of shape (in, out)) and ``meta``,
a JSON string with ``format`` (:data:`FORMAT`), ``num_players`` (3 or 4) and ``tricks``
(1..7, the deck it was trained on). Spec: ``nfsp:path=RUN/avg_policy.npz`` (or the run
folder), ``nfsp:PATH,temperature=0``.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np

from twilight_env.obs.encoding import OBS_SIZE, encode_infoset
from twilight_env.obs.layout import MATCH, TARGET, TOTALS
from twilight_env.rules.engine import NUM_ACTIONS

from twilight_env.agents.sampling import check_temperature, legal_matrix, sample, temperature_suffix, tempered_probs

FORMAT = "twilight-nfsp-avg"
"""``format`` of an average-policy weights file."""
WEIGHTS_NAME = "avg_policy.npz"
"""File name of the average policy in a training run folder."""
MATCH_FIELDS = np.r_[MATCH, TOTALS:TOTALS + 4, TARGET]
"""Observation entries of the match context, zeroed before the forward pass."""


def forward_probs(layers: list[tuple[np.ndarray, np.ndarray]], obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Softmax over the legal actions of an MLP's logits.

    Args:
        layers: ``[(w (in, out) float32, b (out,) float32), ...]``, ReLU between layers.
        obs: ``(B, OBS_SIZE)`` float32 observations.
        mask: ``(B, 31)`` bool legal actions, at least one per row.

    Returns:
        ``(B, 31)`` float64, 0 on illegal actions, rows summing to 1.
    """
    h = np.asarray(obs, dtype=np.float32)
    for k, (w, b) in enumerate(layers):
        h = h @ w + b
        if k < len(layers) - 1:
            np.maximum(h, 0.0, out=h)
    logits = np.where(mask, h.astype(np.float64), -np.inf)
    logits -= logits.max(axis=1, keepdims=True)
    e = np.exp(logits)
    return e / e.sum(axis=1, keepdims=True)


def save_weights(layers: list[tuple[np.ndarray, np.ndarray]], num_players: int, tricks: int) -> bytes:
    """The ``.npz`` bytes of an average policy (module docstring); write them atomically."""
    arrays = {}
    for k, (w, b) in enumerate(layers):
        arrays[f"w{k}"], arrays[f"b{k}"] = np.asarray(w, np.float32), np.asarray(b, np.float32)
    meta = {"format": FORMAT, "num_players": int(num_players), "tricks": int(tricks), "layers": len(layers)}
    buf = io.BytesIO()
    np.savez(buf, meta=np.array(json.dumps(meta)), **arrays)
    return buf.getvalue()


def load_weights(path: str | Path) -> tuple[list[tuple[np.ndarray, np.ndarray]], dict]:
    """``(layers, meta)`` of an average-policy file or of a run folder holding one.

    Raises:
        ValueError: a missing or unreadable file, another format, or layers whose shapes do
            not chain from ``OBS_SIZE`` inputs to 31 outputs, naming the file.
    """
    p = Path(path)
    if p.is_dir():
        p = p / WEIGHTS_NAME
    try:
        with np.load(p, allow_pickle=False) as z:
            meta = json.loads(str(z["meta"]))
            if meta.get("format") != FORMAT:
                raise ValueError(f"format {meta.get('format')!r}, not {FORMAT!r}")
            layers = [(z[f"w{k}"], z[f"b{k}"]) for k in range(int(meta["layers"]))]
    except (OSError, KeyError, ValueError, TypeError) as e:
        raise ValueError(f"{str(p)!r} is not an NFSP average-policy file ({WEIGHTS_NAME} of "
                         f"`python -m twilight_env.training.nfsp`): {e}") from None
    width = OBS_SIZE
    for w, b in layers:
        if w.ndim != 2 or w.shape[0] != width or b.shape != (w.shape[1],) or not np.isfinite(w).all():
            raise ValueError(f"{str(p)!r}: layer shapes do not chain from {OBS_SIZE} inputs (or hold NaN/inf)")
        width = w.shape[1]
    if width != NUM_ACTIONS or meta.get("num_players") not in (3, 4):
        raise ValueError(f"{str(p)!r}: the network must end in {NUM_ACTIONS} outputs and name 3 or 4 players")
    return layers, meta


class NfspAgent:
    """Plays an NFSP average policy (module docstring).

    Args:
        path: an ``avg_policy.npz`` or a training run folder holding one.
        temperature: 1 (default) samples the average policy; 0 plays its most probable action.

    Raises:
        ValueError: a bad file or temperature.
    """

    def __init__(self, path: str = "", temperature: float = 1.0):
        if not path:
            raise ValueError("nfsp needs path=RUN/avg_policy.npz (written by python -m twilight_env.training.nfsp)")
        self.layers, self.meta = load_weights(path)
        self.temperature = check_temperature(temperature, "nfsp")
        self.name = f"nfsp:{path}" + temperature_suffix(self.temperature)

    def reset(self) -> None:
        """Nothing to reset: the agent keeps no state between decisions."""

    def _check(self, infoset) -> None:
        n, t = self.meta["num_players"], self.meta.get("tricks", 7)
        if infoset.num_players != n or infoset.num_tricks != t:
            raise ValueError(f"this NFSP network plays {n} players with {t} tricks; the deal has "
                             f"{infoset.num_players} players and {infoset.num_tricks} tricks")

    def action_probs_batch(self, infosets, legal_actions_list) -> np.ndarray:
        """``(B, 31)`` float64: the distribution played at each information set (0 on illegal
        actions, rows summing to 1), one forward pass for the batch."""
        for inf in infosets:
            self._check(inf)
        obs = np.stack([encode_infoset(inf) for inf in infosets])
        obs[:, MATCH_FIELDS] = 0.0
        legal = legal_matrix(legal_actions_list)
        return tempered_probs(forward_probs(self.layers, obs, legal), legal, self.temperature)

    def action_probs(self, infoset, legal_actions) -> np.ndarray:
        """``(31,)`` float64: the distribution this agent plays at ``infoset`` (module docstring)."""
        return self.action_probs_batch([infoset], [legal_actions])[0]

    def probs_rows(self, eng, idx: np.ndarray) -> np.ndarray:
        """:meth:`action_probs` at rows ``idx`` of a batch engine
        (:class:`~twilight_env.envs.vector.VectorEngine`, full deck, deals in progress), from
        the deciding seat's observation there (:func:`twilight_env.obs.vector_obs.observe`, the
        same vector as the scalar encoder): ``(len(idx), 31)`` float64. The search responder
        (``training/search_response.py``) reads a stochastic target's rows this way.

        Raises:
            ValueError: a network trained for another number of players or a reduced deck.
        """
        from twilight_env.obs.vector_obs import observe

        if eng.num_players != self.meta["num_players"] or self.meta.get("tricks", 7) != 7:
            raise ValueError(f"this NFSP network plays {self.meta['num_players']} players with "
                             f"{self.meta.get('tricks')} tricks; the batch engine plays {eng.num_players} players, 7 tricks")
        idx = np.asarray(idx, dtype=np.int64)
        obs = observe(eng, eng.deciding_seat)[idx]
        legal = ((eng.legal_bits()[idx][:, None] >> np.arange(NUM_ACTIONS)) & 1).astype(bool)
        return tempered_probs(forward_probs(self.layers, obs, legal), legal, self.temperature)

    def act(self, infoset, legal_actions, rng: np.random.Generator | None = None) -> int:
        """A legal action: a draw from :meth:`action_probs` with one uniform of ``rng``
        (``temperature=0``: the most probable action, no draw)."""
        probs = self.action_probs(infoset, legal_actions)
        if self.temperature == 0:
            return int(np.argmax(probs))
        return int(sample(probs[None], rng)[0])


from twilight_env.agents.base import AgentDecl, Option, declare  # noqa: E402

declare(AgentDecl(
    name="nfsp", factory=NfspAgent, summary="an NFSP average policy (NumPy), sampled or greedy",
    bare_option="path", exact_target=True,
    options=(
        Option("path", str, "", doc="avg_policy.npz of python -m twilight_env.training.nfsp, or its run folder", holds="path"),
        Option("temperature", float, 1.0, low=0, high=100, doc="1: the average policy; 0: its most probable action"),
    )))
