"""The vectorized RL environment over the batch engine: one deal episode per row, auto-reset (R2-R5, R7).

:class:`TwilightVectorEnv` is described in :mod:`twilight_env.envs.vector`, which re-exports it.
"""

from __future__ import annotations

import numpy as np

from twilight_env.envs.vector_engine import VectorEngine
from twilight_env.rules.engine import NUM_ACTIONS
from twilight_env.util.seeding import check_seed


class TwilightVectorEnv:
    """A vectorized environment: ``num_envs`` deals stepped together, for RL libraries.

    Every row is one deal episode (R2-R5; 3 players R7). Each step takes one action per
    row from the seat that decides there, returns the next decision's observation and
    action mask for every row, and starts a new deal in every row whose deal just ended
    (auto-reset), so every row always awaits a decision.

    | item | shape, dtype | meaning |
    |------|--------------|---------|
    | ``obs`` | (B, OBS_SIZE) float32 | observation of the deciding player (``info["seat"]``), identical to ``encoding.encode_observation(state, seat)`` |
    | ``mask`` | (B, 31) int8 | 1 at each legal action (``State.legal_actions``) |
    | ``reward`` | (B, 4) float32 | per seat: (own side's deal points - the other side's) / 360, in the step that ends the deal; 0 otherwise |
    | ``done`` | (B,) bool | the deal of that row ended in this step (the row already holds a new deal) |
    | ``info["seat"]`` | (B,) int64 | seat whose decision ``obs``/``mask`` are about (3 players: the solo, 0, decides for the new moon, R7.3) |
    | ``info["acting_seat"]`` | (B,) int64 | seat whose hand or choice the decision is about (chooser or requested holder) |
    | ``info["deal_points"]`` | (B, 2) int64 | deal points of side 0 (seats 0, 2) and side 1 (seats 1, 3) of the deal that ended in this step; 0 elsewhere |

    Reward convention (``docs/API.md``, Rewards, deal episodes): at a deal's end seat ``s`` receives
    ``returns[s] / 360`` where ``returns`` is :meth:`VectorEngine.returns`; partners get
    the same reward and the two sides' rewards sum to 0; each reward lies in [-1, 1]. In
    3 players seat 0 is the solo (Moon, with the new moon, seat 2) against Sun seats 1
    and 3, and seat 2's reward equals seat 0's. Sum a seat's rewards to get its return.

    First leaders: in 4 players the first deal of row ``i`` is led by seat 0, and each
    new deal in a row is led by the seat after the previous deal's first leader (the
    dealer passes left, R2.4); ``rotate_leader=False`` keeps seat 0. In 3 players the
    solo (seat 0) always leads (R7.2).

    Args:
        num_envs: B >= 1.
        num_players: 4 or 3.
        seed: seed of the ``numpy.random.Generator`` that deals the cards (R2.3).
        backend, device: as for :class:`VectorEngine`; on torch every array returned is a
            tensor on ``device``.
        rotate_leader: 4 players: rotate the first leader per row from deal to deal.
        copy: return a new ``obs`` array each step (default). ``False`` reuses one
            buffer: faster, but the previous step's ``obs`` is overwritten.

    Gymnasium vector-env attributes (``gymnasium.vector.VectorEnv``; the step signature
    above is this env's own, with the mask beside the observation): ``num_envs``,
    ``single_observation_space`` (``Box`` (OBS_SIZE,) float32, the AEC env's
    ``"observation"`` space), ``single_action_space`` (``Discrete(31)``),
    ``observation_space`` / ``action_space`` (their batched forms, ``Box`` (B, OBS_SIZE)
    and ``MultiDiscrete`` (B,)), ``metadata`` (``autoreset_mode`` SAME_STEP: a row's new
    deal is returned in the step that ends the old one), ``render_mode`` (None),
    ``closed`` and :meth:`close`. The env pickles and deep-copies on both backends (a
    copy holds the same deals and generator and continues exactly as the original).

    Raises:
        ValueError: on a bad argument; :meth:`step` on an illegal action (nothing changes).
        RuntimeError: :meth:`reset`, :meth:`step` and :meth:`random_actions` after :meth:`close`.
    """

    render_mode = None
    """No rendering (Gymnasium vector-env attribute)."""

    def __init__(self, num_envs: int, num_players: int = 4, seed: int | None = None, *,
                 backend: str = "numpy", device=None, rotate_leader: bool = True, copy: bool = True):
        from gymnasium import spaces  # lazy: the module imports only NumPy at load time
        from gymnasium.vector.utils import batch_space

        from twilight_env.obs.encoding import TOTALS, TOTALS_CAP

        self.engine = VectorEngine(num_envs, num_players, backend=backend, device=device)
        self.num_envs = self.engine.num_envs
        self.num_players = self.engine.num_players
        self.rotate_leader = bool(rotate_leader) and self.num_players == 4
        self.copy = bool(copy)
        self.rng = np.random.default_rng(check_seed(seed))
        self.deals_finished = 0
        """Deals finished since construction (all rows)."""
        self._obs = None
        self._mask = None
        self.closed = False
        """True after :meth:`close`; stepping or resetting a closed env raises ``RuntimeError``."""
        high = np.ones(self.observation_size, dtype=np.float32)
        high[TOTALS:] = TOTALS_CAP  # as the AEC env's observation space (0 in deal episodes)
        self.single_observation_space = spaces.Box(0.0, high, (self.observation_size,), np.float32)
        self.single_action_space = spaces.Discrete(NUM_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        try:
            from gymnasium.vector import AutoresetMode

            mode = AutoresetMode.SAME_STEP
        except ImportError:  # gymnasium < 1.1 has no AutoresetMode
            mode = "SameStep"
        self.metadata = {"autoreset_mode": mode, "render_modes": []}

    def close(self) -> None:
        """Release the state arrays (on torch: the device memory); idempotent. Afterwards
        :meth:`reset`, :meth:`step`, :meth:`step_packed` and :meth:`random_actions` raise
        ``RuntimeError``."""
        if self.closed:
            return
        self.closed = True
        self.engine = None
        self._obs = self._mask = None

    def _check_open(self) -> None:
        if self.closed:
            raise RuntimeError("this TwilightVectorEnv is closed (close() was called); make a new one")

    @property
    def observation_size(self) -> int:
        """Length N of one observation vector (``encoding.OBS_SIZE``)."""
        from twilight_env.obs.encoding import OBS_SIZE

        return OBS_SIZE

    def _outputs(self, deal_points):
        e = self.engine
        o = e.ops
        if self.copy or self._obs is None:
            self._obs = o.empty((self.num_envs, self.observation_size), o.float32)
        obs = e.observe(out=self._obs)
        bits = e.legal_bits()
        mask = e.legal_mask(bits)
        mask = mask.view(np.int8) if o.name == "numpy" else mask.view(o.int8)
        info = {"seat": e.deciding_seat, "acting_seat": e.acting_seat, "deal_points": deal_points}
        return obs, mask, info

    def reset(self, seed: int | None = None, deals=None):
        """Deal new cards in every row.

        Args:
            seed: reseed the dealing generator first (same seed, same deals).
            deals: explicit deals, one per row (anything :func:`deals_to_hands` takes).

        Returns:
            ``(obs, mask, info)`` as in the class table.
        """
        self._check_open()
        if seed is not None:
            self.rng = np.random.default_rng(check_seed(seed))
        self.engine.reset(rng=self.rng, deals=deals)
        o = self.engine.ops
        return self._outputs(o.zeros((self.num_envs, 2), o.int64))

    def step(self, actions):
        """Play one action in every row (the deciding seat's), then auto-reset finished deals.

        Args:
            actions: (B,) ints in 0..30, each legal in its row.

        Returns:
            ``(obs, mask, reward, done, info)`` as in the class table.

        Raises:
            ValueError: naming the rows with an illegal action; nothing changes then.
            RuntimeError: if the env is closed.
        """
        reward, done, deal_points = self._advance(actions)
        obs, mask, info = self._outputs(deal_points)
        return obs, mask, reward, done, info

    def step_packed(self, actions):
        """As :meth:`step`, but the observations come in the compact form of
        :meth:`VectorEngine.observe_packed` (NumPy backend): ``((flags, scalars), mask,
        reward, done, info)``; expand them with ``vector_obs.unpack_observation`` (on the
        device that trains on them)."""
        reward, done, deal_points = self._advance(actions)
        e = self.engine
        packed = e.observe_packed()
        mask = e.legal_mask().view(np.int8)
        info = {"seat": e.deciding_seat, "acting_seat": e.acting_seat, "deal_points": deal_points}
        return packed, mask, reward, done, info

    def _advance(self, actions):
        """Apply ``actions``, score and re-deal finished rows; (reward, done, deal_points)."""
        self._check_open()
        e = self.engine
        o = e.ops
        e.apply(actions)
        done = e.done
        reward = o.zeros((self.num_envs, 4), o.float32)
        deal_points = o.zeros((self.num_envs, 2), o.int64)
        if bool(done.any()):
            scores = e.side_scores()
            d = scores[:, 0] - scores[:, 1]
            d = d * done
            reward[:] = o.cast(o.cast(o.stack([d, -d, d, -d], 1), o.float64) / 360.0, o.float32)
            deal_points = scores * done[:, None]
            n = int(done.sum())
            self.deals_finished += n
            idx = np.flatnonzero(o.to_numpy(done))
            lead = ((o.to_numpy(e.first_leader)[idx] + 1) % 4) if self.rotate_leader else 0
            e.reset(idx, rng=self.rng, leaders=lead)
        return reward, done, deal_points

    def random_actions(self):
        """(B,) uniformly random legal actions, drawn from the env's generator."""
        self._check_open()
        return self.engine.random_actions(self.rng)
