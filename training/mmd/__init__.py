"""Magnetic Mirror Descent self-play: a policy network trained toward low exploitability.

Algorithm: Magnetic Mirror Descent (MMD; Sokota et al., ICLR 2023, "A Unified Approach to
Reinforcement Learning, Quantal Response Equilibria, and Two-Player Zero-Sum Games"), the
regularised policy-gradient family of R-NaD (Perolat et al. 2022, DeepNash): a policy-gradient
step on the advantage, a KL penalty toward a *magnet* policy, and the magnet moved slowly
toward the current policy, so that the regularised equilibrium it converges to moves toward
a Nash equilibrium (:mod:`~twilight_env.training.mmd.learner`). The network is the
expert-iteration policy-value network (:class:`twilight_env.agents.exit.PolicyValueNet`),
new or started from ``policy:default``'s weights; the ``mmd`` agent plays the trained policy
as a distribution. During training 10% of the actions are drawn uniformly (``explore``,
importance-weighted in the policy gradient), so that the information sets a best response can
reach stay visited (``results/mmd/README.md``: a line without it lost its NashConv there).

Why MMD rather than R-NaD proper: every update here plays fresh deals with the current
policy (the batch engine, or lockstep reduced-deck deals), so the data is on-policy and
R-NaD's v-trace corrections reduce to Monte Carlo returns; what is left of R-NaD (the
log-ratio reward transform toward the regularisation policy, replaced every N steps) is
MMD's KL-to-magnet term with ``magnet_tau = 1``. MMD needs no second target network, no
NeuRD logit thresholds and no per-player reward transform, so the loss is a few lines on
the project's network and its figures can be checked against the exact NashConv of the
reduced decks.

| module | content |
|---|---|
| ``config.py`` | :class:`MMDConfig`, the settings, each with its unit |
| ``rollout.py`` | sampled self-play deals: reduced decks (lockstep engine states) and the full deck (batch engine) |
| ``learner.py`` | the MMD loss, the update, the magnet move |
| ``evaluate.py`` | exact NashConv of a network on a reduced deck (the tree of ``training/reduced_solve.py``) |
| ``checkpoint.py`` | one checkpoint per line (atomic, digest-checked) and the ``policy.npz`` export |
| ``run.py`` | the training loop, the curve file and the command line |
| ``report.py`` | ``summary.json`` of finished runs (``results/mmd/``) |

Usage::

    python -m twilight_env.training.mmd --players 3 --tricks 1 --minutes 10 --out runs/mmd3
    python -m twilight_env.training.mmd --out runs/mmd3 --resume --minutes 10
    python -m twilight_env.training.mmd --players 3 --tricks 7 --init-weights default --minutes 60 --out runs/mmd3full
    twilight arena mmd:runs/mmd3full policy --players 3

Checkpoints are small enough to keep one per line under ``results/``: the magnet and the Adam
moments are stored in bfloat16 at the line's checkpoint steps (``--state-dtype``; the running
line rounds itself to the stored values, so a resumed line still equals an unstopped one), and a
``--minutes`` budget ends at a checkpoint step. A folder that keeps the checkpoint alone gets
its ``policy.npz`` back with ``python -m twilight_env.training.mmd --out RUN --export``; a line
started before ``state_dtype`` existed takes it on resume (``--resume --state-dtype bfloat16``).
"""

from twilight_env.training.mmd.config import MMDConfig

__all__ = ["MMDConfig"]
