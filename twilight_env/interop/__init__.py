"""OpenSpiel: the game, and OpenSpiel bots as agents."""
