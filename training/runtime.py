"""Helpers the training commands share: the device, interrupts, random-generator states,
CPU copies of tensors, and the errors that stop a run.

Deep Monte-Carlo (:mod:`twilight_env.training.train`, :mod:`twilight_env.training.dmc`),
expert iteration (:mod:`twilight_env.training.exit`) and the best responder
(:mod:`twilight_env.training.best_response`) use them alike, so that each stops, saves and
resumes the same way.
"""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import torch

from twilight_env.agents.nn.checkpoint import CHECKPOINT_NAME


def check_device(device: str) -> torch.device:
    """The torch device for ``--device``.

    Raises:
        ValueError: if ``cuda`` is asked and no CUDA device is usable, or the name is unknown.
    """
    if device == "cpu":
        return torch.device("cpu")
    if device == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(f"--device cuda asked, but torch {torch.__version__} sees no usable CUDA device "
                             f"(torch.cuda.is_available() is False); use --device cpu")
        return torch.device("cuda")
    raise ValueError(f"--device must be 'cpu' or 'cuda', got {device!r}")


def rng_state(rng: np.random.Generator) -> dict:
    """The state of ``rng``'s bit generator, a plain dict a checkpoint stores (:func:`set_rng_state` restores it)."""
    return rng.bit_generator.state


def set_rng_state(rng: np.random.Generator, state: dict) -> None:
    """Put ``rng`` back in a state :func:`rng_state` returned (``rng`` changes in place)."""
    rng.bit_generator.state = state


class TrainingInterrupted(KeyboardInterrupt):
    """Raised by :func:`train` after Ctrl-C (SIGINT) or SIGTERM, once the checkpoint is written.

    Attributes:
        signum: the signal number (``signal.SIGINT`` also for a plain ``KeyboardInterrupt``).
        run_dir: the run directory, or None if the run had not started.
        decisions: decisions seen by the learner when it stopped.
        command: the command line that continues the run, or None.
    """

    def __init__(self, signum: int, run_dir=None, decisions: int | None = None, command: str | None = None):
        self.signum, self.decisions, self.command = int(signum), decisions, command
        self.run_dir = None if run_dir is None else str(run_dir)
        what = "Ctrl-C" if signum == signal.SIGINT else signal.Signals(signum).name
        if command is None:
            msg = f"interrupted ({what}) before training started; nothing saved"
        else:
            msg = (f"interrupted ({what}) at {decisions:,} decisions; checkpoint saved in "
                   f"{Path(run_dir) / CHECKPOINT_NAME}; continue with: {command}")
        super().__init__(msg)


class Signals:
    """While entered (main thread only): SIGINT and SIGTERM raise ``KeyboardInterrupt``
    carrying ``signum``; inside :meth:`held` they are held until the block ends (so a
    learner step or a log entry is never half done); :meth:`ignore` drops them (the last
    checkpoint write)."""

    def __init__(self):
        self.signum: int | None = None
        self._held = 0
        self._pending = False
        self._ignoring = False
        self._old: dict = {}

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._old[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc):
        for sig, handler in self._old.items():
            signal.signal(sig, handler)
        return False

    def _handle(self, signum, frame):
        if self._ignoring:
            return
        self.signum = signum
        if self._held:
            self._pending = True
            return
        raise self.interrupt(signum)

    @staticmethod
    def interrupt(signum: int) -> KeyboardInterrupt:
        e = KeyboardInterrupt()
        e.signum = signum
        return e

    @contextmanager
    def held(self):
        self._held += 1
        try:
            yield
        finally:
            self._held -= 1
            if not self._held and self._pending:
                self._pending = False
                raise self.interrupt(self.signum)

    @contextmanager
    def ignore(self):
        self._ignoring = True
        try:
            yield
        finally:
            self._ignoring = False


class TrainingDiverged(ValueError):
    """Raised when a loss or the weights stop being finite (NaN or inf, e.g. a learning rate
    far too high): training stops with this one-line error and non-finite weights are
    never saved."""


def check_finite_weights(model: torch.nn.Module, what: str) -> None:
    """Raise :class:`TrainingDiverged` if any weight of ``model`` is NaN or inf (called
    before every checkpoint, so none holds non-finite weights)."""
    bad = [name for name, p in model.named_parameters() if not bool(torch.isfinite(p).all())]
    if bad:
        raise TrainingDiverged(f"training diverged: {what} holds NaN or inf weights ({', '.join(bad[:3])}); the run "
                               "stops without saving them (the last checkpoint, if any, is kept); resume or restart "
                               "it with a lower --lr")


def to_cpu(obj):
    """``obj`` with every tensor in it (nested in dicts, lists and tuples) detached and on the CPU,
    e.g. an optimizer's state before it is saved; other values are kept as they are."""
    if isinstance(obj, torch.Tensor):
        return obj.detach().cpu()
    if isinstance(obj, dict):
        return {k: to_cpu(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(to_cpu(v) for v in obj)
    return obj



__all__ = ["Signals", "TrainingDiverged", "TrainingInterrupted", "check_device", "check_finite_weights", "rng_state",
           "set_rng_state", "to_cpu"]
