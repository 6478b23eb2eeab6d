"""Environments: the PettingZoo AEC env, the Gymnasium single-agent wrapper, the batch engine and the spectator table."""
