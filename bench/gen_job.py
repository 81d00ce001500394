#!/usr/bin/python3
"""Write a large, deterministic training job's logs the way real trainers leave them.

Where gen.py writes mostly launcher and logging chatter, this generator writes what dominates a
real job's output: every rank prints a step line at every step, with its loss, learning rate,
gradient norm, throughput and step time (as custom loops, torchtitan, Megatron, Hugging Face,
nanoGPT-style and JSON-logging trainers do), rank 0 draws a tqdm bar, NCCL prints its INFO lines
at start and whenever a new communicator comes up (evaluation, checkpoints), Python and c10
warnings come at start and now and then, checkpoints and evaluations are announced, and rare
*real* failure blocks (cut from the repository's example logs and the labelled corpus, as
gen.py does) come scattered and at the end.

The trainer's step-line style changes every --style-steps steps, so one file holds each shape.
Output: one interleaved console log where every line carries torchrun's "[rankN]: " prefix
(launcher lines carry none), and optionally the same lines as one file per rank plus
launcher.log (prefix removed, as torchrun --log-dir writes them).

Python 3 standard library only. Same arguments + same seed -> byte-identical output.

Usage:
  gen_job.py --size-mb 1024 --out /tmp/job.log [--per-rank-dir DIR] [--ranks 64] [--seed 1]
             [--failure-lines 300] [--style-steps 200] [--gz] [--zst]
"""
import argparse
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen import (choose_failures, close_outputs, compress, flush_lines, hms,  # noqa: E402
                 load_real_blocks, open_outputs)  # the same real failure blocks and files as gen.py

BAR_FULL = "\u2588"
BAR_PART = " \u258f\u258e\u258d\u258c\u258b\u258a\u2589"


class Job:
    """The job's state: step, time, loss, learning rate; every rank's identity."""

    def __init__(self, a):
        self.a = a
        self.rng = random.Random(a.seed)
        self.R = a.ranks
        self.hosts = ["gpu-node-%03d" % (r // 8) for r in range(self.R)]
        self.pids = [31000 + 41 * r for r in range(self.R)]
        self.step = 0
        self.total = a.total_steps
        self.t = 0.0  # seconds since 2024-05-01 08:00:00
        self.loss = 10.8
        self.lr = 0.0
        self.speed = [1.0 + 0.03 * self.rng.random() for _ in range(self.R)]

    def ts(self, sep=",", millis=True):
        s = int(self.t)
        d, s = divmod(s, 86400)
        h, s = divmod(s, 3600)
        m, s = divmod(s, 60)
        out = "2024-05-%02d %02d:%02d:%02d" % (1 + d, (8 + h) % 24 if d == 0 else h, m, s)
        return out + "%s%03d" % (sep, int((self.t % 1) * 1000)) if millis else out

    def us_date(self):
        s = int(self.t)
        d, s = divmod(s, 86400)
        h, s = divmod(s, 3600)
        m, s = divmod(s, 60)
        return "05/%02d/2024 %02d:%02d:%02d" % (1 + d, (8 + h) % 24 if d == 0 else h, m, s)

    # -- the step line of every rank, in the style of the moment ------------------------------
    def step_line(self, r, style):
        rng = self.rng
        st = self.step
        loss = self.loss + (rng.random() - 0.5) * 0.08
        gn = 0.3 + rng.random() * 0.9
        dt = 0.7 * self.speed[r] + rng.random() * 0.05
        tps = int(8192 * 4 / dt)
        if style == 0:  # a custom loop through Python logging
            return "%s - INFO - train - step %d/%d | loss %.4f | lr %.3e | grad_norm %.3f | tokens/s %d | step_time %.3fs | mem %.1fGB" % (
                self.ts(), st, self.total, loss, self.lr, gn, tps, dt, 30 + rng.random() * 4)
        if style == 1:  # torchtitan
            return "[titan] %s - root - INFO - step: %d  loss: %7.4f  memory: %5.2fGiB(%5.2f%%)  tps: %s  tflops: %.2f  mfu: %.2f%%" % (
                self.ts(), st, loss, 34 + rng.random(), 43 + rng.random(), "{:,}".format(tps // 4),
                120 + rng.random() * 10, 38 + rng.random() * 3)
        if style == 2:  # Megatron's training_log
            return " [%s] iteration %8d/%8d | consumed samples: %12d | elapsed time per iteration (ms): %.1f | learning rate: %.6E | global batch size: %5d | lm loss: %.6E | loss scale: 1.0 | grad norm: %.3f | number of skipped iterations: %3d | number of nan iterations: %3d |" % (
                self.ts(millis=False), st, self.total, st * 512, dt * 1000, self.lr, 512, loss, gn, 0, 0)
        if style == 3:  # Hugging Face Trainer's log dict, printed by every rank of a custom callback
            return "{'loss': %.4f, 'grad_norm': %.6f, 'learning_rate': %s, 'epoch': %.2f, 'step': %d}" % (
                loss, gn, repr(round(self.lr, 10)), st / 5000.0, st)
        if style == 4:  # nanoGPT-style prints
            return "iter %d: loss %.4f, time %.2fms, mfu %.2f%%" % (st, loss, dt * 1000, 38 + rng.random() * 3)
        if style == 5:  # JSON lines
            return '{"step": %d, "loss": %.5f, "lr": %.6g, "grad_norm": %.4f, "throughput": %.1f, "step_time": %.4f}' % (
                st, loss, self.lr, gn, tps / 1.0, dt)
        # accelerate's get_logger
        return "%s - INFO - __main__ - epoch %d step %d: loss=%.4f lr=%.2e grad_norm=%.3f samples_per_sec=%.1f" % (
            self.us_date(), st // 5000, st, loss, self.lr, gn, 8 / dt)

    def tqdm(self, n, total, desc="Training"):
        pct = n * 100 // total
        eighths = n * 80 // total
        full = eighths // 8
        bar = BAR_FULL * full + (BAR_PART[eighths % 8] if full < 10 else "")
        bar = (bar + " " * 10)[:10]
        el = int(n * 0.72)
        rem = int((total - n) * 0.72)
        return "%s: %3d%%|%s| %d/%d [%s<%s, %.2fit/s, loss=%.3f, lr=%.2e]" % (
            desc, pct, bar, n, total, hms(el), hms(rem), 1.3 + self.rng.random() * 0.1, self.loss, self.lr)

    # -- NCCL --------------------------------------------------------------------------------
    def nccl(self, r, k):
        rng = self.rng
        h, p = self.hosts[r], self.pids[r]
        tid = p + 100 + rng.randrange(300)
        lr = r % 8
        R = self.R
        msgs = (
            lambda: "NCCL INFO Bootstrap : Using ib0:10.2.%d.%d<0>" % (r // 8, 10 + lr),
            lambda: "NCCL INFO NET/Plugin: Loaded net plugin NCCL RDMA Plugin v8 (v8)",
            lambda: "NCCL INFO cudaDriverVersion 12040",
            lambda: "NCCL INFO NCCL version 2.21.5+cuda12.4",
            lambda: "NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB [3]mlx5_3:1/IB ; OOB ib0:10.2.%d.%d<0>" % (r // 8, 10 + lr),
            lambda: "NCCL INFO Using network IB",
            lambda: "NCCL INFO comm 0x%x rank %d nranks %d cudaDev %d nvmlDev %d busId %x000 commId 0x%016x - Init START" % (
                0x5580a0000000 + rng.randrange(1 << 24), r, R, lr, lr, 0x18 + 0x10 * lr, rng.getrandbits(64)),
            lambda: "NCCL INFO Setting affinity for GPU %d to ffffffff,00000000,ffffffff" % lr,
            lambda: "NCCL INFO Channel %02d/%d : %d[%d] -> %d[%d] via P2P/CUMEM/read" % (
                rng.randrange(32), 32, r, lr, (r + 1) % R, (lr + 1) % 8),
            lambda: "NCCL INFO Channel %02d/0 : %d[%d] -> %d[%d] [send] via NET/IB/%d/GDRDMA" % (
                rng.randrange(32), r, lr, (r + 8) % R, lr, lr // 2),
            lambda: "NCCL INFO Trees [0] %d/-1/-1->%d->%d [1] %d/-1/-1->%d->%d" % (
                (r + 1) % R, r, (r - 1) % R, (r + 1) % R, r, (r - 1) % R),
            lambda: "NCCL INFO P2P Chunksize set to 524288",
            lambda: "NCCL INFO Connected all rings",
            lambda: "NCCL INFO Connected all trees",
            lambda: "NCCL INFO threadThresholds 8/8/64 | 512/8/64 | 512 | 512",
            lambda: "NCCL INFO %d coll channels, %d collnet channels, 0 nvls channels, %d p2p channels, %d p2p channels per peer" % (
                32, 0, 32, 2),
            lambda: "NCCL INFO comm 0x%x rank %d nranks %d cudaDev %d nvmlDev %d busId %x000 commId 0x%016x - Init COMPLETE" % (
                0x5580a0000000 + rng.randrange(1 << 24), r, R, lr, lr, 0x18 + 0x10 * lr, rng.getrandbits(64)),
        )
        return "%s:%d:%d [%d] %s" % (h, p, tid, lr, msgs[k % len(msgs)]())

    # -- warnings ----------------------------------------------------------------------------
    def warning(self, r):
        rng = self.rng
        k = rng.randrange(6)
        if k == 0:
            return ["/opt/conda/lib/python3.10/site-packages/torch/utils/checkpoint.py:464: UserWarning: torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. In version 2.4 we will raise an exception if use_reentrant is not passed.",
                    "  return torch._C._functions.UnpackDualImpl.apply(*args)"]
        if k == 1:
            return ["[W%02d%02d %02d:%02d:%02d.%06d %d reducer.cpp:1400] Warning: find_unused_parameters=True was specified in DDP constructor, but did not find any unused parameters in the forward pass. This flag results in an extra traversal of the autograd graph every iteration." % (
                5, 1, 8, rng.randrange(60), rng.randrange(60), rng.randrange(10 ** 6), self.pids[r])]
        if k == 2:
            return ["%s - WARNING - transformers.modeling_utils - Some weights of the model checkpoint were not used when initializing LlamaForCausalLM: ['lm_head.bias']" % self.ts()]
        if k == 3:
            return ["/opt/conda/lib/python3.10/site-packages/torch/distributed/fsdp/_state_dict_utils.py:773: UserWarning: When using ``NO_SHARD`` for ``ShardingStrategy``, full_state_dict will be returned.",
                    "  warnings.warn("]
        if k == 4:
            return ["%s - WARNING - data.loader - slow shard %05d: read took %.2fs, prefetch queue at %d/%d" % (
                self.ts(), rng.randrange(4096), 2 + rng.random() * 3, rng.randrange(8), 8)]
        return ["%s - WARNING - torch.distributed.elastic.multiprocessing.redirects - NOTE: Redirects are currently not supported in Windows or MacOs." % self.ts()]

    def long_line(self, r):
        rng = self.rng
        if rng.random() < 0.5:
            parts = ['"%s_%d": %s' % (rng.choice(["hidden", "attn", "mlp", "rope", "norm", "vocab"]), i,
                                       rng.choice(["true", "false", str(rng.randrange(1, 65536)),
                                                   "%.6g" % rng.random(), '"silu"', "null"]))
                     for i in range(rng.randrange(80, 300))]
            return "Model config LlamaConfig {" + ", ".join(parts) + "}"
        vals = ", ".join("%.4f" % (rng.random() * 2 - 1) for _ in range(rng.randrange(300, 900)))
        return "tensor([" + vals + "], device='cuda:%d', dtype=torch.bfloat16)" % (r % 8)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size-mb", type=float, default=100, help="target size of the console log in MB (10^6 bytes)")
    ap.add_argument("--out", required=True, help="the interleaved console log to write")
    ap.add_argument("--ranks", type=int, default=64)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--per-rank-dir", help="also write rankN.log per rank and launcher.log here")
    ap.add_argument("--failure-lines", type=int, default=300, help="about how many real failure lines to insert")
    ap.add_argument("--style-steps", type=int, default=200, help="steps before the step-line style changes")
    ap.add_argument("--total-steps", type=int, default=500000)
    ap.add_argument("--gz", action="store_true", help="also write OUT.gz (gzip -1)")
    ap.add_argument("--zst", action="store_true", help="also write OUT.zst (zstd -3)")
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--repo", default=os.path.dirname(here))
    ap.add_argument("--corpus", default=os.path.join(os.path.dirname(os.path.dirname(here)), "shared", "corpus"))
    a = ap.parse_args()

    target = int(a.size_mb * 1000000)
    j = Job(a)
    rng = j.rng
    R = a.ranks
    blocks = load_real_blocks(a.repo, a.corpus)
    if not blocks:
        sys.exit("gen_job.py: no real log lines found under %s or %s" % (a.repo, a.corpus))
    chosen, scattered, at_end, bulk_target, insert_at = choose_failures(rng, blocks, a.failure_lines, target)
    out, rank_files = open_outputs(a.out, a.per_rank_dir, R)
    buf = []
    rbufs = [[] for _ in range(R + 1)] if rank_files else None
    written = 0
    stats = {"lines": 0, "step": 0, "nccl": 0, "bar": 0, "warn": 0, "failure": 0, "crlf": 0, "ansi": 0,
             "long": 0}
    prefixes = ["[rank%d]: " % r for r in range(R)]

    def emit(r, text, eol="\n", kind=None):
        nonlocal written
        line = (prefixes[r] + text if r >= 0 else text) + eol
        buf.append(line)
        written += len(line) if line.isascii() else len(line.encode("utf-8"))
        stats["lines"] += 1
        if kind:
            stats[kind] += 1
        if rbufs is not None:
            rbufs[r if r >= 0 else R].append(text + eol)
        if len(buf) >= 8192:
            flush()

    def flush():
        flush_lines(out, buf, rank_files, rbufs)

    def emit_block(b):
        r = rng.randrange(R)
        launcher = any("ChildFailedError" in l or "torch.distributed.elastic" in l for l in b)
        for l in b:
            emit(-1 if launcher else r, l, kind="failure")

    def nccl_burst(lines_per_rank):
        for r in range(R):
            for k in range(lines_per_rank):
                emit(r, j.nccl(r, k if k < 17 else rng.randrange(17)), kind="nccl")

    # start-up: launcher banner, warnings, the model config, NCCL's communicator set-up
    emit(-1, "%s - WARNING - torch.distributed.run - " % j.ts() +
         "*" * 40 + " Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed. " + "*" * 40)
    for r in range(R):
        for l in j.warning(r):
            emit(r, l, kind="warn")
    emit(0, j.long_line(0), kind="long")
    nccl_burst(40)

    ii = 0
    style = 0
    while written < bulk_target:
        j.step += 1
        j.t += 0.7 + rng.random() * 0.05
        j.loss = max(1.2, j.loss * 0.9995 + (rng.random() - 0.5) * 0.01)
        j.lr = min(3e-4, 3e-4 * j.step / 2000) if j.step < 2000 else j.lr * 0.99999
        if j.step % a.style_steps == 0:
            style = (style + 1) % 7
        # every rank's step line, in rank order as the lines of one step arrive
        order = list(range(R))
        rng.shuffle(order)
        for r in order:
            x = rng.random()
            if x < 0.001:
                emit(r, "\x1b[32m%s\x1b[0m | \x1b[1mINFO\x1b[0m | step %d loss %.4f" % (j.ts("."), j.step, j.loss),
                     kind="ansi")
            elif x < 0.002:
                emit(r, j.step_line(r, style), "\r\n", kind="crlf")
            else:
                emit(r, j.step_line(r, style), kind="step")
        # rank 0's tqdm bar (one redraw a line, some glued by carriage returns)
        if rng.random() < 0.02:
            s0 = j.step
            chain = []
            for i in range(rng.randrange(5, 40)):
                chain.append(j.tqdm(min(j.total, s0 + i), j.total))
            emit(0, "\r".join(chain), kind="bar")
        else:
            emit(0, j.tqdm(j.step, j.total), kind="bar")
        if j.step % 10 == 0:
            emit(0, "[%s] [INFO] [logging.py:96:log_dist] [Rank 0] step=%d, skipped=0, lr=[%.6e], mom=[(0.9, 0.95)]" % (
                j.ts(), j.step, j.lr))
            emit(0, "[%s] [INFO] [timer.py:264:stop] epoch=0/micro_step=%d/global_step=%d, RunningAvgSamplesPerSec=%.4f, CurrSamplesPerSec=%.4f, MemAllocated=%.2fGB, MaxMemAllocated=%.2fGB" % (
                j.ts(), j.step * 4, j.step, 44 + rng.random(), 44 + rng.random() * 2, 21 + rng.random(), 63 + rng.random()))
        if j.step % 250 == 0:
            r = rng.randrange(R)
            for l in j.warning(r):
                emit(r, l, kind="warn")
        if j.step % 1000 == 0:
            emit(0, "%s - INFO - trainer - Saving model checkpoint to ./out/checkpoint-%d" % (j.ts(), j.step))
            emit(0, "***** Running Evaluation *****")
            emit(0, "  Num examples = 20000")
            emit(0, "  Batch size = 16")
            nccl_burst(6)
            for r in range(R):
                emit(r, "{'eval_loss': %.4f, 'eval_runtime': %.2f, 'eval_samples_per_second': %.3f, 'eval_steps_per_second': %.3f, 'epoch': %.2f}" % (
                    j.loss + 0.1, 40 + rng.random(), 480 + rng.random() * 10, 30 + rng.random(), j.step / 5000.0))
        if rng.random() < 0.0005:
            emit(rng.randrange(R), j.long_line(0), kind="long")
        while ii < len(insert_at) and written >= insert_at[ii]:
            emit_block(scattered[ii])
            ii += 1
    while ii < len(scattered):
        emit_block(scattered[ii])
        ii += 1
    for b in at_end:
        emit_block(b)
    flush()
    close_outputs(out, rank_files)

    size = os.path.getsize(a.out)
    print("gen_job.py: wrote %s: %.1f MB, %d lines, %d steps of %d ranks: %d step lines, %d bar lines, "
          "%d NCCL INFO, %d warning lines, %d real failure lines from %d blocks, %d long, %d CRLF, %d ANSI; seed %d" % (
              a.out, size / 1e6, stats["lines"], j.step, R, stats["step"] + stats["crlf"], stats["bar"],
              stats["nccl"], stats["warn"], stats["failure"], len(chosen), stats["long"], stats["crlf"],
              stats["ansi"], a.seed), file=sys.stderr)
    compress(a.out, a.gz, a.zst, "gen_job.py")

if __name__ == "__main__":
    main()
