"""The Magnetic Mirror Descent update (Sokota et al., ICLR 2023, "A Unified Approach to
Reinforcement Learning, Quantal Response Equilibria, and Two-Player Zero-Sum Games").

MMD's step at an information set ``s`` with action values ``q`` is

    pi_{t+1} = argmax_pi  eta * (<q, pi> - alpha * KL(pi || rho)) - KL(pi || pi_t)

(closed form ``pi_{t+1} ∝ (pi_t · rho^(alpha·eta) · exp(eta·q))^(1/(1+alpha·eta))``): a
mirror-descent step on the value regularised toward the *magnet* ``rho``. With ``rho`` fixed it
converges to the regularised (quantal-response-like) equilibrium of the game; moving ``rho``
slowly toward the current policy moves that fixed point toward a Nash equilibrium
(the magnet of the paper's Section 3.3; R-NaD's regularisation policy, replaced every N
steps, Perolat et al. 2022, is the same outer loop).

With a network, one gradient step from ``theta_t`` on fresh on-policy deals: the gradient of
``KL(pi || pi_t)`` is 0 there, ``<q, pi>`` is estimated by the policy gradient on the
advantage ``A = G - V(s)`` of the sampled action (``G`` the deal's return for the deciding
side, R5), weighted by ``w = pi(a|s) / mu(a|s)`` when the action was drawn from an exploring
behaviour policy ``mu`` (``twilight_env.training.mmd.rollout``; ``w <= 1 / (1 - explore)``), and
the KL to the magnet is computed exactly over the legal actions:

    loss = mean_s [ -w · A · log pi(a|s) + alpha · KL(pi(.|s) || rho(.|s)) - entropy · H(pi(.|s))
                    + value_coef · (V(s) - G)^2 ]

:func:`move_magnet` moves the magnet's weights toward the policy's
(``rho += tau · (theta - rho)`` every ``magnet_every`` updates; ``tau = 1`` replaces it).
"""

from __future__ import annotations

import torch

from twilight_env.training.mmd.rollout import Trajectories


def _tensors(traj: Trajectories):
    return (torch.from_numpy(traj.rows), torch.from_numpy(traj.roles), torch.from_numpy(traj.legal),
            torch.from_numpy(traj.actions), torch.from_numpy(traj.returns), torch.from_numpy(traj.behaviour))


def mmd_loss(model, magnet, traj: Trajectories, alpha: float, entropy: float = 0.0,
             value_coef: float = 0.5) -> tuple[torch.Tensor, dict]:
    """The MMD loss of one batch of on-policy decisions (module docstring).

    Args:
        model: the :class:`~twilight_env.agents.exit.PolicyValueNet` being trained.
        magnet: a network of the same shape (no gradient is taken through it).
        traj: decisions played by ``model``'s current policy (``K >= 1`` of them).
        alpha, entropy, value_coef: the loss weights (:class:`~twilight_env.training.mmd.config.MMDConfig`).

    Returns:
        ``(loss, figures)``: the scalar loss tensor, and floats ``policy``, ``kl`` (mean KL to
        the magnet, nats), ``entropy`` (mean, nats), ``value`` (mean squared error, (points/360)^2).

    Raises:
        ValueError: an empty batch.
    """
    if len(traj.actions) == 0:
        raise ValueError("mmd_loss needs at least one recorded decision")
    rows, roles, legal, actions, returns, behaviour = _tensors(traj)
    logits, value = model(rows, roles, legal)
    logp = torch.log_softmax(logits, dim=1)
    with torch.no_grad():
        mag_logp = torch.log_softmax(magnet(rows, roles, legal)[0], dim=1)
    p = logp.exp()
    zero = torch.zeros((), dtype=logp.dtype)
    kl = torch.where(legal, p * (logp - mag_logp), zero).sum(1)
    ent = -torch.where(legal, p * logp, zero).sum(1)
    adv = returns - value.detach()
    logp_a = logp.gather(1, actions[:, None]).squeeze(1)
    weight = logp_a.detach().exp() / behaviour
    pg = -(weight * adv * logp_a)
    vloss = (value - returns) ** 2
    loss = (pg + alpha * kl - entropy * ent + value_coef * vloss).mean()
    figures = {k: float(v.detach().mean()) for k, v in (("policy", pg), ("kl", kl), ("entropy", ent),
                                                          ("value", vloss))}
    return loss, figures


@torch.no_grad()
def move_magnet(magnet, model, tau: float) -> None:
    """``magnet <- magnet + tau * (model - magnet)``, parameter by parameter (module docstring).

    Raises:
        ValueError: ``tau`` outside [0, 1], or networks of different shapes.
    """
    if not 0.0 <= tau <= 1.0:
        raise ValueError(f"tau must be in [0, 1], got {tau!r}")
    src = dict(model.named_parameters())
    for name, p in magnet.named_parameters():
        q = src.get(name)
        if q is None or q.shape != p.shape:
            raise ValueError(f"the magnet and the network differ at {name!r}")
        p.add_(q - p, alpha=tau)


def update(model, magnet, optimizer, traj: Trajectories, cfg) -> dict:
    """One MMD update of ``model`` on ``traj`` with Adam (clipped to ``cfg.max_grad_norm``).

    Returns:
        the figures of :func:`mmd_loss` and ``grad_norm``.

    Raises:
        FloatingPointError: a loss that is NaN or inf (the weights are left unchanged).
    """
    loss, figures = mmd_loss(model, magnet, traj, cfg.alpha, cfg.entropy, cfg.value_coef)
    if not torch.isfinite(loss):
        raise FloatingPointError(f"training diverged: the MMD loss is {float(loss)} (lower --lr)")
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.max_grad_norm or float("inf"))
    optimizer.step()
    figures["grad_norm"] = float(norm)
    return figures


__all__ = ["mmd_loss", "move_magnet", "update"]
