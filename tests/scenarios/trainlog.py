"""trainlog.py -- the ways the scenario scripts print what a training loop prints, one per style.

Every scenario script reports through common.py (log, log_step, setup, done); this module decides
how those lines look, so that one failure can be run in the output style of several trainers.
SCN_STYLE picks the style:

  plain      the lines of the first scenarios: "[rank 1] step 3/8 loss 0.4521 step_time 0.012s"
  print      a hand-written loop's print: "rank 1 | epoch 0 | it 3/8 | loss 0.4521 | lr 1.0e-02 |
             grad norm 0.812 | 12.3 ms/it"
  logging    Python logging in Hydra's format on stderr, fields as key=value
  tqdm       a tqdm bar on stderr ("Epoch 0:  38%|###   | 3/8 [00:00<00:01, 4.12it/s, loss=...]")
             redrawn with carriage returns, so a crash leaves the bar and the traceback on one line
  hf         the Hugging Face Trainer: its "***** Running training *****" block, a bar on stderr
             and one dict per step ({'loss': 0.4521, 'grad_norm': 0.81, 'learning_rate': 0.01, ...})
  lightning  Lightning: "Initializing distributed: GLOBAL_RANK: ..", the registration banner, the
             model summary and its bar on stdout with v_num and train_loss in the postfix
  megatron   Megatron-LM's "> initializing torch distributed ..." and its `|`-separated iteration
             lines (lm loss, grad norm, number of nan iterations)
  json       one JSON object per step (NaN written as NaN, as Python's json does)

Unlike most trainers, every style prints on every rank (each rank's view is what ddx reads). tqdm
itself is not needed: the bars are drawn here in its format (10-column bar, as tqdm draws when
its stream is not a terminal).
"""
import datetime
import json
import logging
import math
import os
import sys
import time

_BAR_CHARS = " " + "".join(map(chr, range(0x258F, 0x2587, -1)))  # tqdm's unicode bar


def _interval(seconds):
    m, s = divmod(int(seconds), 60)
    h, m = divmod(m, 60)
    return f"{h:d}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


def tqdm_meter(n, total, elapsed, desc="", postfix=""):
    """One redraw of a tqdm bar, as tqdm.format_meter writes it for a non-terminal stream."""
    frac = n / total if total else 0.0
    nsyms = len(_BAR_CHARS) - 1
    full, part = divmod(int(frac * 10 * nsyms), nsyms)
    bar = _BAR_CHARS[-1] * full
    if full < 10:
        bar += _BAR_CHARS[part] + _BAR_CHARS[0] * (10 - full - 1)
    rate = n / elapsed if elapsed > 0 and n else None
    if rate is None:
        rate_s, remaining = "?it/s", "?"
    elif rate < 1:
        rate_s, remaining = f"{1 / rate:5.2f}s/it", _interval((total - n) / rate)
    else:
        rate_s, remaining = f"{rate:5.2f}it/s", _interval((total - n) / rate)
    left = (f"{desc}: " if desc else "") + f"{frac * 100:3.0f}%|"
    post = f", {postfix}" if postfix else ""
    return f"{left}{bar}| {n}/{total} [{_interval(elapsed)}<{remaining}, {rate_s}{post}]"


class Step:
    """What one training step reports: filled by common.log_step."""

    def __init__(self, rank, step, total, loss, step_time, lr, grad_norm, data_time=None,
                 epoch=0, samples=0):
        self.rank, self.step, self.total = rank, step, total
        self.loss, self.step_time, self.lr, self.grad_norm = loss, step_time, lr, grad_norm
        self.data_time, self.epoch, self.samples = data_time, epoch, samples


def _out(msg):
    print(msg, flush=True)


def _err(msg, end="\n"):
    sys.stderr.write(msg + end)
    sys.stderr.flush()


class Plain:
    """The first scenarios' lines (the default style)."""

    def before_init(self, rank, world):
        pass

    def ready(self, rank, world, timeout, pid):
        _out(f"[rank {rank}] process group ready: backend=gloo world_size={world} "
             f"timeout={timeout:g}s pid={pid}")

    def info(self, msg):
        _out(msg)

    def step(self, s):
        extra = f" data_time {s.data_time:.3f}s" if s.data_time is not None else ""
        _out(f"[rank {s.rank}] step {s.step}/{s.total} loss {s.loss:.4f} "
             f"step_time {s.step_time:.3f}s{extra}")

    def finish(self, rank):
        _out(f"[rank {rank}] training finished")


class Print(Plain):
    """A hand-written loop that prints one `|`-separated line per iteration."""

    def ready(self, rank, world, timeout, pid):
        _out(f"rank {rank}/{world} initialised (gloo, timeout {timeout:g}s, pid {pid})")

    def step(self, s):
        data = f" | data {s.data_time * 1000:.1f} ms" if s.data_time is not None else ""
        _out(f"rank {s.rank} | epoch {s.epoch} | it {s.step}/{s.total} | loss {s.loss:.4f} | "
             f"lr {s.lr:.1e} | grad norm {s.grad_norm:.3f} | {s.step_time * 1000:.1f} ms/it{data}")

    def finish(self, rank):
        _out(f"rank {rank} done")


class Logging(Plain):
    """Python logging, Hydra's default format, on stderr."""

    def __init__(self):
        logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                            format="[%(asctime)s][%(name)s][%(levelname)s] - %(message)s")
        self.log = logging.getLogger("train")

    def before_init(self, rank, world):
        self.log.info("rank=%s world_size=%s: initialising process group", rank, world)

    def ready(self, rank, world, timeout, pid):
        self.log.info("rank=%s: process group ready (backend=gloo, timeout=%gs, pid=%s)",
                      rank, timeout, pid)

    def info(self, msg):
        self.log.info(msg)

    def step(self, s):
        data = f" data_time={s.data_time:.3f}s" if s.data_time is not None else ""
        self.log.info(f"rank={s.rank} epoch={s.epoch} step={s.step}/{s.total} loss={s.loss:.4f} "
                      f"lr={s.lr:.3e} grad_norm={s.grad_norm:.4f} step_time={s.step_time:.3f}s{data}")

    def finish(self, rank):
        self.log.info("rank=%s: training complete", rank)


class Bar(Plain):
    """A tqdm bar on stderr, redrawn in place; other messages go to stdout."""

    desc = "Epoch 0"
    stream = staticmethod(_err)

    def __init__(self):
        self.t0 = None
        self.drawn = self.complete = False

    def ready(self, rank, world, timeout, pid):
        _out(f"Running DDP example on rank {rank}.")

    def postfix(self, s):
        data = f", data={s.data_time:.3f}s" if s.data_time is not None else ""
        return f"loss={s.loss:.3f}, lr={s.lr:.3g}, grad_norm={s.grad_norm:.3g}{data}"

    def draw(self, n, total, postfix=""):
        if self.t0 is None:
            self.t0 = time.time()
        self.stream("\r" + tqdm_meter(n, total, time.time() - self.t0, self.desc, postfix), end="")
        self.drawn = True

    def step(self, s):
        if self.t0 is None:
            self.t0 = time.time() - s.step_time
            self.draw(0, s.total)
        self.draw(s.step, s.total, self.postfix(s))
        self.complete = s.step == s.total

    def finish(self, rank):
        if self.drawn:
            self.stream("", end="\n")


class HF(Bar):
    """The Hugging Face Trainer: start-up block on rank 0, a bar on stderr, a dict per step."""

    desc = ""

    def ready(self, rank, world, timeout, pid):
        if rank == 0:
            _out("***** Running training *****\n  Num examples = 48\n  Num Epochs = 1\n"
                 "  Instantaneous batch size per device = 4\n"
                 f"  Total train batch size (w. parallel, distributed & accumulation) = {4 * world}\n"
                 "  Gradient Accumulation steps = 1\n  Number of trainable parameters = 161")
        self.loss_sum, self.steps, self.world = 0.0, 0, world

    def postfix(self, s):
        return ""

    def step(self, s):
        super().step(s)
        self.loss_sum += s.loss
        self.steps += 1
        _out(str({"loss": round(s.loss, 4), "grad_norm": s.grad_norm,
                  "learning_rate": s.lr, "epoch": round(s.step / s.total, 2)}))

    def finish(self, rank):
        super().finish(rank)
        runtime = time.time() - self.t0 if self.t0 else 0.0
        _out(str({"train_runtime": round(runtime, 4),
                  "train_samples_per_second": round(4 * self.world * self.steps / runtime, 3)
                  if runtime else 0.0,
                  "train_steps_per_second": round(self.steps / runtime, 3) if runtime else 0.0,
                  "train_loss": self.loss_sum / max(1, self.steps), "epoch": 1.0}))


class Lightning(Bar):
    """Lightning: distributed banner, model summary, bar with v_num/train_loss on stdout."""

    stream = staticmethod(lambda msg, end="\n": print(msg, end=end, flush=True))
    _RULE = "-" * 100

    def before_init(self, rank, world):
        _out(f"Initializing distributed: GLOBAL_RANK: {rank}, MEMBER: {rank + 1}/{world}")

    def ready(self, rank, world, timeout, pid):
        if rank == 0:
            _out(f"{self._RULE}\ndistributed_backend=gloo\nAll distributed processes registered. "
                 f"Starting with {world} processes\n{self._RULE}\n")
            _out("  | Name | Type   | Params\n--------------------------------\n"
                 "0 | fc1  | Linear | 144   \n1 | act  | ReLU   | 0     \n"
                 "2 | fc2  | Linear | 17    \n--------------------------------\n"
                 "161       Trainable params\n0         Non-trainable params\n"
                 "161       Total params\n0.001     Total estimated model params size (MB)")

    def postfix(self, s):
        return f"v_num=0, train_loss={s.loss:.3f}, grad_norm={s.grad_norm:.3f}"

    def finish(self, rank):
        super().finish(rank)
        if self.complete:
            _out("`Trainer.fit` stopped: `max_epochs=1` reached.")


class Megatron(Plain):
    """Megatron-LM's start-up lines and `|`-separated iteration lines."""

    def __init__(self):
        self.nan_iters = 0

    def before_init(self, rank, world):
        if rank == 0:
            _out("> initializing torch distributed ...")

    def ready(self, rank, world, timeout, pid):
        self.world = world
        if rank == 0:
            _out("> initialized tensor model parallel with size 1\n"
                 "> initialized pipeline model parallel with size 1\n"
                 "> setting random seeds to 1234 ...")
        _out(f"[after model, optimizer, and learning rate scheduler are built] datetime: "
             f"{datetime.datetime.now():%Y-%m-%d %H:%M:%S}")
        if rank == 0:
            _out("training ...")

    def step(self, s):
        if not math.isfinite(s.loss):
            self.nan_iters += 1
        gbs = 4 * self.world
        _out(f" [{datetime.datetime.now():%Y-%m-%d %H:%M:%S}] iteration {s.step:8d}/{s.total:8d} |"
             f" consumed samples: {s.step * gbs:12d} |"
             f" elapsed time per iteration (ms): {s.step_time * 1000:.1f} |"
             f" learning rate: {s.lr:.6E} | global batch size: {gbs:5d} |"
             f" lm loss: {s.loss:.6E} | loss scale: 1.0 | grad norm: {s.grad_norm:.3f} |"
             f" number of skipped iterations: {0:3d} | number of nan iterations: {self.nan_iters:3d} |")

    def finish(self, rank):
        _out(f"[after training is done] datetime: {datetime.datetime.now():%Y-%m-%d %H:%M:%S}")


class JsonLines(Plain):
    """One JSON object per line."""

    def ready(self, rank, world, timeout, pid):
        _out(json.dumps({"event": "init", "rank": rank, "world_size": world, "backend": "gloo"}))

    def info(self, msg):
        _out(json.dumps({"event": "message", "text": msg}))

    def step(self, s):
        rec = {"rank": s.rank, "epoch": s.epoch, "step": s.step, "total_steps": s.total,
               "loss": round(s.loss, 5) if math.isfinite(s.loss) else s.loss, "lr": s.lr,
               "grad_norm": round(s.grad_norm, 5) if math.isfinite(s.grad_norm) else s.grad_norm,
               "step_time_ms": round(s.step_time * 1000, 2)}
        if s.data_time is not None:
            rec["data_time_ms"] = round(s.data_time * 1000, 2)
        _out(json.dumps(rec))

    def finish(self, rank):
        _out(json.dumps({"event": "done", "rank": rank}))


STYLES = {"plain": Plain, "print": Print, "logging": Logging, "tqdm": Bar, "hf": HF,
          "lightning": Lightning, "megatron": Megatron, "json": JsonLines}


def from_env():
    name = os.environ.get("SCN_STYLE", "plain")
    if name not in STYLES:
        sys.exit(f"trainlog: SCN_STYLE={name!r} is not one of {', '.join(STYLES)}")
    return STYLES[name]()
