"""Train the card-location model (:mod:`twilight_env.agents.inference`) on records of ``twilight_env.training.inference_data``.

``python -m twilight_env.training.train_inference --data d3.npz --out inf3.pt --minutes 5 [--resume] [--export agents/weights/inference_3p.pt]``

Supervised learning (Solinas, Rebstock & Buro, AAAI 2019): minimise the cross-entropy
of the true seat of every unseen card under the masked softmax of the network, in nats
per unseen card. The records are split by deal: deals whose index is ``≡ 0 mod 10``
form the validation set (never trained on). AdamW (``--weight-decay``), ``--dropout``
after each hidden layer, minibatches of ``--batch`` records, until ``--minutes`` of
training time in total (a resumed run counts the time already spent). Every ``--eval-every`` seconds the validation loss is measured, logged to
TensorBoard (``losses/train``, ``losses/val``; the run directory ``--logdir``, default
``runs/inference__{seed}__{unixtime}``) and the checkpoint ``--out`` is written
atomically (temporary file, then rename): the model, the optimizer, the step and time
counters, the best validation loss with its weights (``best_model``) and the RNG states.
``--resume`` continues from ``--out``; without it an existing ``--out`` is refused.
``--export FILE`` finally writes the best weights alone (no optimizer), the small file
that ``pimc:inference=model`` loads.
"""

from __future__ import annotations

from twilight_env.util.extras import require

require("torch", "train", "twilight_env.training.train_inference", as_main=__name__ == "__main__")

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch.utils.tensorboard import SummaryWriter

from twilight_env.agents.inference import (CardLocationNet, allowed_from_features, checkpoint_dict, model_from_checkpoint,
                              read_checkpoint, save_checkpoint)
from twilight_env.training.inference_data import load

VAL_MOD = 10
"""Deals with ``index % VAL_MOD == 0`` are the validation set."""


def masked_nll(model: CardLocationNet, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, int]:
    """Summed negative log-likelihood (nats) of the true seats of the unseen cards, and their number.

    Args:
        x: ``(B, FEATURE_SIZE)`` float32; y: ``(B, 28)`` int64 relative seats, -1 for cards not unseen.
    """
    allowed = allowed_from_features(x)
    logp = model(x, allowed)
    mask = y >= 0
    picked = logp.gather(2, y.clamp(min=0)[:, :, None])[:, :, 0]
    return -(picked * mask).sum(), int(mask.sum())


def evaluate(model: CardLocationNet, x: torch.Tensor, y: torch.Tensor, batch: int = 4096) -> float:
    """Mean NLL per unseen card (nats) over a record set."""
    total, n = 0.0, 0
    model.eval()
    with torch.no_grad():
        for i in range(0, len(x), batch):
            s, k = masked_nll(model, x[i:i + batch], y[i:i + batch])
            total += float(s)
            n += k
    model.train()
    return total / max(n, 1)


def uniform_nll(x: torch.Tensor, y: torch.Tensor) -> float:
    """Mean NLL per unseen card (nats) of the uniform sampler's marginals: a card of a cult
    lies with a hidden seat with probability (that seat's count of the cult) / (unseen
    cards of the cult), R2.5. The baseline the model must beat."""
    o = 24 * 28
    counts = (x[:, o:o + 64].view(-1, 4, 2, 8) * torch.arange(8.0)).sum(dim=3)   # (B, rel seat, cult)
    allowed = allowed_from_features(x)
    cult = torch.zeros(28, dtype=torch.long)
    cult[14:] = 1
    per = counts[:, :, cult].transpose(1, 2) * allowed                          # (B, 28, 4)
    tot = per.sum(dim=2, keepdim=True).clamp(min=1)
    mask = y >= 0
    p = (per / tot).gather(2, y.clamp(min=0)[:, :, None])[:, :, 0]
    return float(-(torch.log(p.clamp(min=1e-12)) * mask).sum() / mask.sum().clamp(min=1))


def _git_hash() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5,
                              cwd=Path(__file__).resolve().parent).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def load_many(paths) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict]:
    """:func:`twilight_env.training.inference_data.load` of one or more record files of one variant,
    concatenated (deal indices offset so that deals of different files stay apart).

    Raises:
        ValueError: as ``load``, or files of different numbers of players.
    """
    if isinstance(paths, str):
        paths = [paths]
    xs, ys, ds, metas = [], [], [], []
    offset = 0
    for p in paths:
        x, y, d, meta = load(p)
        if metas and meta["num_players"] != metas[0]["num_players"]:
            raise ValueError(f"record files mix {metas[0]['num_players']} and {meta['num_players']} players")
        xs.append(x)
        ys.append(y)
        ds.append(d.astype(np.int64) + offset)
        offset += int(d.max()) + 1 if len(d) else 0
        metas.append(meta)
    meta = dict(metas[0])
    meta["files"] = metas
    return np.concatenate(xs), np.concatenate(ys), np.concatenate(ds), meta


@dataclass
class InferenceTrainSettings:
    """How :func:`train` fits the card-location model (the command's flags)."""

    minutes: float
    """Training time in total, a resumed run's time included (minutes, > 0)."""
    hidden: int = 256
    """Hidden units per layer of a new network (units; a resumed run keeps its own)."""
    batch: int = 512
    """Records per AdamW step (records, >= 1)."""
    lr: float = 1e-3
    """AdamW learning rate (per step; a resumed run keeps its optimizer's)."""
    seed: int = 0
    """Seed of the initial weights and the batch draws of a new run (integer)."""
    eval_every: float = 30.0
    """Training time between validations and checkpoints (seconds, > 0)."""
    logdir: str | None = None
    """TensorBoard folder of a new run (default ``runs/inference__{seed}__{unixtime}``; a resumed run keeps its own)."""
    threads: int = 1
    """Torch threads (threads)."""
    dropout: float = 0.3
    """Dropout after each hidden layer (probability in [0, 1))."""
    weight_decay: float = 1e-3
    """AdamW weight decay (coefficient per step, >= 0)."""

    def validate(self) -> "InferenceTrainSettings":
        """Check values; return self.

        Raises:
            ValueError: naming the flags and what they allow.
        """
        if not self.minutes > 0:
            raise ValueError(f"--minutes must be > 0, got {self.minutes!r}")
        if (self.hidden < 1 or self.batch < 1 or not self.lr > 0 or not self.eval_every > 0
                or not 0 <= self.dropout < 1 or self.weight_decay < 0):
            raise ValueError("--hidden and --batch must be >= 1, --lr and --eval-every > 0, --dropout in [0, 1), "
                             "--weight-decay >= 0")
        return self


@dataclass
class _Progress:
    """A run's state: the model, its optimizer, the step and time counters, the best
    validation loss and its weights, the batch RNG and the TensorBoard folder."""

    model: CardLocationNet
    opt: torch.optim.Optimizer
    step: int
    seconds: float
    best_val: float
    best_model: dict | None
    rng: np.random.Generator
    logdir: str


def _resume_progress(out: str, npl: int, s: InferenceTrainSettings, log) -> _Progress:
    """The state saved in the training checkpoint ``out`` (torch's RNG state restored).

    Raises:
        ValueError: an unreadable checkpoint, one for another number of players, or an export.
    """
    ckpt = read_checkpoint(Path(out), npl)
    if "optimizer" not in ckpt:
        raise ValueError(f"{out!r} holds weights only (an export); resume needs a training checkpoint")
    model = CardLocationNet(int(ckpt["hidden"]), s.dropout)
    model.load_state_dict(model_from_checkpoint(ckpt, out).state_dict())
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=s.lr, weight_decay=s.weight_decay)
    opt.load_state_dict(ckpt["optimizer"])
    rng = np.random.default_rng()
    rng.bit_generator.state = json.loads(ckpt["rng"])
    torch.set_rng_state(ckpt["torch_rng"])
    p = _Progress(model, opt, ckpt["step"], ckpt["seconds"], ckpt["best_val"], ckpt["best_model"], rng,
                  ckpt["logdir"])
    log(f"resumed {out} at step {p.step}, {p.seconds:.0f} s trained, best val {p.best_val:.4f}")
    return p


def _new_progress(s: InferenceTrainSettings) -> _Progress:
    torch.manual_seed(s.seed)
    model = CardLocationNet(s.hidden, s.dropout)
    opt = torch.optim.AdamW(model.parameters(), lr=s.lr, weight_decay=s.weight_decay)
    return _Progress(model, opt, 0, 0.0, float("inf"), None, np.random.default_rng(s.seed),
                     s.logdir or f"runs/inference__{s.seed}__{int(time.time())}")


def _split_records(data) -> tuple[tuple, tuple, dict]:
    """``(x, y)`` of the training and of the validation records (deals ``≡ 0 mod`` :data:`VAL_MOD`)
    and the records' metadata.

    Raises:
        ValueError: unreadable records, or too few deals for both parts.
    """
    x_np, y_np, deal, meta = load_many(data)
    val = deal % VAL_MOD == 0
    if val.all() or not val.any():
        raise ValueError(f"{data!r} need records from at least {VAL_MOD + 1} deals (train and validation split by deal)")
    train_xy = torch.from_numpy(x_np[~val]), torch.from_numpy(y_np[~val].astype(np.int64))
    val_xy = torch.from_numpy(x_np[val]), torch.from_numpy(y_np[val].astype(np.int64))
    return train_xy, val_xy, meta


def train(data, out: str, settings: InferenceTrainSettings, resume: bool = False, log=print) -> dict:
    """Train (or continue) a card-location model; returns the final checkpoint dict.

    Args:
        data: record file(s) of :mod:`twilight_env.training.inference_data`.
        out: the training checkpoint (written atomically every ``settings.eval_every`` seconds).
        settings: :class:`InferenceTrainSettings`.
        resume: continue ``out`` (else an existing ``out`` is refused).
        log: called with each progress line.

    Raises:
        ValueError: bad options, an unreadable record file or checkpoint, ``--out``
            present without ``resume``, or a checkpoint for another number of players.
    """
    s = settings.validate()
    torch.set_num_threads(s.threads)
    (x_tr, y_tr), (x_va, y_va), meta = _split_records(data)
    npl = meta["num_players"]
    out_p = Path(out)
    if out_p.exists() and not resume:
        raise ValueError(f"{out!r} exists; pass --resume to continue it, or choose another --out")
    p = _resume_progress(out, npl, s, log) if resume else _new_progress(s)
    writer = SummaryWriter(p.logdir)
    log(f"{len(x_tr)} training and {len(x_va)} validation records; uniform baseline on validation "
        f"{uniform_nll(x_va, y_va):.4f} nats/card")
    if not resume:
        writer.add_text("config", json.dumps({"data": data, "data_meta": meta, "hidden": s.hidden, "batch": s.batch,
                                              "lr": s.lr, "dropout": s.dropout, "weight_decay": s.weight_decay,
                                              "seed": s.seed, "minutes": s.minutes, "git": _git_hash()}))
    files = [os.path.abspath(d) for d in ([data] if isinstance(data, str) else data)]
    budget = s.minutes * 60.0
    n = len(x_tr)
    t_last = time.monotonic()
    since_eval, run_loss, run_n = 0.0, 0.0, 0
    while p.seconds < budget:
        idx = torch.from_numpy(p.rng.integers(n, size=min(s.batch, n)))
        summed, k = masked_nll(p.model, x_tr[idx], y_tr[idx])
        loss = summed / max(k, 1)
        p.opt.zero_grad()
        loss.backward()
        p.opt.step()
        p.step += 1
        run_loss += float(summed.detach())
        run_n += k
        now = time.monotonic()
        p.seconds += now - t_last
        since_eval += now - t_last
        t_last = now
        if since_eval >= s.eval_every or p.seconds >= budget:
            _validate_and_save(p, x_va, y_va, run_loss / max(run_n, 1), writer, log, out_p, npl, files)
            since_eval, run_loss, run_n = 0.0, 0.0, 0
            t_last = time.monotonic()
    writer.close()
    return read_checkpoint(out_p, npl)


def _validate_and_save(p: _Progress, x_va, y_va, train_loss: float, writer, log, out_p: Path, npl: int,
                       files: list[str]) -> None:
    """Measure the validation loss, log both losses, keep the best weights and write the checkpoint."""
    v = evaluate(p.model, x_va, y_va)
    writer.add_scalar("losses/train", train_loss, p.step)
    writer.add_scalar("losses/val", v, p.step)
    log(f"step {p.step} {p.seconds:.0f}s train {train_loss:.4f} val {v:.4f} nats/card")
    if v < p.best_val:
        p.best_val = v
        p.best_model = {k_: t.detach().clone() for k_, t in p.model.state_dict().items()}
    save_checkpoint(checkpoint_dict(p.model, npl, optimizer=p.opt.state_dict(), step=p.step, seconds=p.seconds,
                                    best_val=p.best_val, best_model=p.best_model,
                                    rng=json.dumps(p.rng.bit_generator.state), torch_rng=torch.get_rng_state(),
                                    logdir=p.logdir, data=files),
                    out_p)


def export(ckpt: dict, dst: str) -> None:
    """Write the best weights of a training checkpoint alone (the shipped file format)."""
    model = CardLocationNet(int(ckpt["hidden"]))
    model.load_state_dict(ckpt["best_model"] if ckpt.get("best_model") is not None else ckpt["model"])
    small = checkpoint_dict(model, ckpt["num_players"], best_val=ckpt.get("best_val"), step=ckpt.get("step"),
                            data=[os.path.basename(str(d)) for d in ckpt.get("data", [])])
    for k in list(small["model"]):
        small["model"][k] = small["model"][k].half()  # float16: half the size; loads as float32
    save_checkpoint(small, dst)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m twilight_env.training.train_inference", description=__doc__.split("\n")[0])
    p.add_argument("--data", required=True, nargs="+", help="record file(s) of twilight_env.training.inference_data")
    p.add_argument("--out", required=True, help="training checkpoint (written atomically)")
    p.add_argument("--minutes", type=float, required=True, help="training time in total, resumed runs included")
    p.add_argument("--resume", action="store_true", help="continue the checkpoint at --out")
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--batch", type=int, default=512)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--eval-every", type=float, default=30.0, help="seconds between validation and checkpoint")
    p.add_argument("--logdir", default=None)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--dropout", type=float, default=0.3)
    p.add_argument("--weight-decay", type=float, default=1e-3)
    p.add_argument("--export", default=None, help="also write the best weights alone to this file")
    a = p.parse_args(argv)
    try:
        settings = InferenceTrainSettings(a.minutes, a.hidden, a.batch, a.lr, a.seed, a.eval_every, a.logdir,
                                          a.threads, a.dropout, a.weight_decay)
        ckpt = train(a.data, a.out, settings, a.resume)
        if a.export:
            export(ckpt, a.export)
            print(f"exported best weights (val {ckpt['best_val']:.4f} nats/card) to {a.export}")
    except ValueError as e:
        p.error(str(e))
    return 0


if __name__ == "__main__":
    sys.exit(main())
