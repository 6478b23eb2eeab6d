"""Neural Fictitious Self-Play (Heinrich & Silver 2016) for 3 and 4 players, on the full deck
and on the reduced decks (``tricks`` 1..7).

| module | content |
|---|---|
| ``config`` | :class:`~twilight_env.training.nfsp.config.NfspConfig`, every setting with its unit |
| ``buffers`` | the replay buffer (FIFO) and the reservoir (reservoir sampling), packed observations |
| ``selfplay`` | one round of deals: each player's policy for the deal drawn with ``eta``, batched decisions |
| ``learner`` | :class:`~twilight_env.training.nfsp.learner.NfspLine`: networks, Q-learning and supervised steps |
| ``store`` | the checkpoint (small, digest-checked) and the buffers beside it |
| ``run`` | the command line, the NashConv curve on reduced decks |

The trained average policy plays as the ``nfsp`` agent (:mod:`twilight_env.agents.nfsp`).
"""
