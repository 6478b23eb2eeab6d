"""The rules of Twilight (R1-R9): cards and their tables, the deal score, the deal and match engine and its compiled core, what a seat knows, the held-out deal sets."""
