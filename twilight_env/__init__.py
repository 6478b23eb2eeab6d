"""twilight-env: Twilight (Bambus, 2001) rules engine and PettingZoo environment."""

__version__ = "0.1.0"
