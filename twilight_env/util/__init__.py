"""Helpers every layer may use: seeds, child processes, damaged-JSON reading, statistics and tables, atomic files, the Ray runner."""
