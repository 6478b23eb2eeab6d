"""Inference-time parts of the Deep Monte-Carlo Q-network (DouZero, Zha et al. 2021).

``features`` (what a deciding seat knows, as compact rows; NumPy only), ``network``
(:class:`~twilight_env.agents.nn.network.QNetwork` and batched scoring of legal actions) and
``checkpoint`` (the file format, atomic writes, checked loads). The ``neural`` agent and
the trainer (``training``) both import them; nothing here imports ``training``.
Submodules are imported on use, so importing this package does not import torch.
"""
