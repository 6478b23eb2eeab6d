"""Observations: the 968-float information-set vector, its layout and its encoders (Python, numba, batch)."""
