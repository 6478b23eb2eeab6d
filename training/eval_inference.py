"""Log-likelihood of the true world: card-location model against the uniform sampler, on fresh deals.

``python -m twilight_env.training.eval_inference --players 3 --deals 300 --seed 424242 [--agents neural:default] [--weights FILE]``

Plays ``--deals`` deals drawn with ``numpy.random.default_rng(seed)`` (use a seed that
no training record file used; held-out seeds are refused as in
``twilight_env.training.inference_data``) with the agent spec at every seat. At each decision kept
(chance ``--keep``) with at least one unseen card, it computes for the deciding seat's
information set the exact log-probability of the true world (the true hands of the
hidden seats) under

- the uniform sampler: ``-log(number of consistent worlds)`` (R2.5), and
- the model sampler: :meth:`twilight_env.agents.worlds.WorldSampler.log_prob` with the
  card-location model's probabilities (the distribution ``pimc:inference=model`` draws from),

and prints both per unseen card (sum of log-probabilities / sum of unseen cards, nats),
the difference with a 95% interval over deals (deals are independent, decisions within
a deal are not), and the same by trick.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from twilight_env.agents.base import make_agent
from twilight_env.agents.inference import card_probs, load_model
from twilight_env.agents.worlds import WorldSampler, uniform_log_prob
from twilight_env.training.inference_data import check_seed
from twilight_env.rules.engine import State
from twilight_env.rules.infoset import InfoSet


def evaluate(players: int, deals: int, seed: int, agents: str = "neural:default", weights: str | None = None,
             keep: float = 0.5) -> dict:
    """Per deal sums of (uniform log-prob, model log-prob, unseen cards) and per trick sums.

    Returns:
        dict with ``deal`` float64 ``(deals, 3)`` and ``trick`` float64 ``(7, 3)``
        columns (uniform log-prob, model log-prob, unseen cards).

    Raises:
        ValueError: bad options or weights (named).
    """
    if players not in (3, 4):
        raise ValueError(f"--players must be 3 or 4, got {players!r}")
    if deals < 1:
        raise ValueError(f"--deals must be >= 1, got {deals!r}")
    check_seed(seed)
    model = load_model(weights, players)
    agent = make_agent(agents)
    deal_rng = np.random.default_rng(seed)
    rng = np.random.default_rng(np.random.SeedSequence((seed, 0x1F3D)))
    per_deal = np.zeros((deals, 3))
    per_trick = np.zeros((7, 3))
    for d in range(deals):
        st = State.random(deal_rng, int(deal_rng.integers(4)), players)
        reset = getattr(agent, "reset", None)
        if reset is not None:
            reset()
        while not st.done:
            info = InfoSet(st, st.deciding_seat)
            n = bin(info.unseen_mask).count("1")
            if n and rng.random() < keep:
                lu = uniform_log_prob(info)
                lm = WorldSampler(info, card_probs(model, info)).log_prob(st.hands)
                row = np.array([lu, lm, n])
                per_deal[d] += row
                per_trick[info.trick] += row
            st.apply(int(agent.act(info, info.legal_actions, rng)))
    return {"deal": per_deal, "trick": per_trick}


def report(res: dict) -> str:
    """The printed table of :func:`evaluate`'s result."""
    d = res["deal"]
    n = d[:, 2].sum()
    u, m = d[:, 0].sum() / n, d[:, 1].sum() / n
    # ratio estimator over deals: per-card difference and its standard error
    diff = (d[:, 1] - d[:, 0]) - (m - u) * d[:, 2]
    se = np.sqrt(np.sum(diff ** 2)) / n
    lines = [f"decisions' unseen cards: {int(n)} over {len(d)} deals",
             f"mean log-likelihood of the true world per unseen card (nats): uniform {u:.4f}  model {m:.4f}  "
             f"model - uniform {m - u:+.4f} (95% CI {m - u - 1.96 * se:+.4f} .. {m - u + 1.96 * se:+.4f})",
             "by trick:  trick  cards  uniform  model"]
    for t, (a, b, k) in enumerate(res["trick"]):
        if k:
            lines.append(f"           {t + 1:5d} {int(k):6d} {a / k:8.4f} {b / k:7.4f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m twilight_env.training.eval_inference", description=__doc__.split("\n")[0])
    p.add_argument("--players", type=int, choices=(3, 4), required=True)
    p.add_argument("--deals", type=int, default=300)
    p.add_argument("--seed", type=int, required=True, help="deal seed; not one used for training records")
    p.add_argument("--agents", default="neural:default")
    p.add_argument("--weights", default=None, help="card-location checkpoint (default: the shipped weights)")
    p.add_argument("--keep", type=float, default=0.5)
    a = p.parse_args(argv)
    try:
        res = evaluate(a.players, a.deals, a.seed, a.agents, a.weights, a.keep)
    except ValueError as e:
        p.error(str(e))
    print(report(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
