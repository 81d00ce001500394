#!/usr/bin/python3
"""Write a large, deterministic multi-rank training log for benchmarking ddx.

The bulk is healthy training chatter (tqdm bars, Hugging Face Trainer loss dicts, NCCL INFO
init lines, Python logging, DeepSpeed log_dist lines), each line carrying a torchrun
"[rankN]:" prefix. Into it go, rarely, blocks of *real* failure lines taken from the
repository's example logs (references/examples/**/*.log) and the labelled corpus
(../shared/corpus/*/log.txt beside the repository): tracebacks, NCCL watchdog lines, OOM lines, ChildFailedError
tables. A few hundred such lines in all, most near the end of the log as in a real failed job.

Some lines are long (a few KB: config dumps, tqdm "\\r" redraws), a few are very long
(1 MB), a small share carry ANSI colour codes or end in CRLF.

Python 3 standard library only. Same arguments + same seed -> byte-identical output.

Usage:
  gen.py --size-mb 100 --out /tmp/ddx-bench/job.log
        [--ranks 16] [--seed 1] [--per-rank-dir DIR] [--gz] [--zst]
        [--failure-lines 300] [--very-long N] [--repo REPO] [--corpus CORPUS]
"""
import argparse
import glob
import os
import random
import re
import shutil
import subprocess
import sys

FAIL_RE = re.compile(
    r"Traceback \(most recent call last\)|Error\b|Error:|NCCL WARN|[Ww]atchdog|out of memory|"
    r"OutOfMemory|ChildFailedError|exitcode|SIGKILL|SIGTERM|SIGSEGV|Signals\.|timed out|"
    r"Timeout\(ms\)|RESOURCE_EXHAUSTED|Segmentation fault|core dumped|Killed")
RANK_PREFIX_RE = re.compile(r"^\s*\[(?:rank|default)\d+\]:\s?")


def load_real_blocks(repo, corpus):
    """Blocks of consecutive real lines around failure lines, as lists of strings."""
    files = sorted(glob.glob(os.path.join(repo, "references", "examples", "**", "*.log"),
                             recursive=True))
    files += sorted(glob.glob(os.path.join(corpus, "*", "log.txt")))
    blocks = []
    for path in files:
        try:
            with open(path, "r", encoding="utf-8", errors="replace") as f:
                lines = [l.rstrip("\r\n") for l in f]
        except OSError:
            continue
        hits = [i for i, l in enumerate(lines) if FAIL_RE.search(l)]
        used = -1
        for i in hits:
            if i <= used:
                continue
            a = max(0, i - 2, used + 1)
            b = min(len(lines), i + 12)
            blk = [RANK_PREFIX_RE.sub("", l) for l in lines[a:b]]
            blk = [l[:4000] for l in blk]
            if blk:
                blocks.append(blk)
            used = b - 1
    return blocks


def choose_failures(rng, blocks, failure_lines, target):
    """About failure_lines lines of real failure blocks: 70 % scattered through the healthy bulk
    (byte offsets insert_at, sorted), 30 % at the end. Returns (chosen, scattered, at_end,
    bulk_target, insert_at), bulk_target being the bytes of healthy lines to write."""
    chosen = []
    n = 0
    while n < failure_lines:
        b = rng.choice(blocks)
        chosen.append(b)
        n += len(b)
    rng.shuffle(chosen)
    n_end = max(1, len(chosen) * 3 // 10)
    scattered, at_end = chosen[:-n_end], chosen[-n_end:]
    budget_end = sum(sum(len(l) + 12 for l in b) for b in at_end)
    bulk_target = max(1, target - budget_end)
    insert_at = sorted(rng.randrange(bulk_target // 20, bulk_target) for _ in scattered)
    return chosen, scattered, at_end, bulk_target, insert_at


def open_outputs(out_path, per_rank_dir, ranks):
    """The whole log, and with per_rank_dir one file per rank plus launcher.log (last)."""
    os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
    out = open(out_path, "w", encoding="utf-8", newline="")
    rank_files = None
    if per_rank_dir:
        os.makedirs(per_rank_dir, exist_ok=True)
        rank_files = [open(os.path.join(per_rank_dir, "rank%d.log" % r), "w", encoding="utf-8", newline="")
                      for r in range(ranks)]
        rank_files.append(open(os.path.join(per_rank_dir, "launcher.log"), "w", encoding="utf-8", newline=""))
    return out, rank_files


def flush_lines(out, buf, rank_files, rbufs):
    """Writes the buffered lines of the whole log and of each rank's file."""
    out.write("".join(buf))
    buf.clear()
    if rbufs is not None:
        for i, rb in enumerate(rbufs):
            if rb:
                rank_files[i].write("".join(rb))
                rb.clear()


def close_outputs(out, rank_files):
    out.close()
    for f in rank_files or ():
        f.close()


def compress(path, gz, zst, who):
    """Also writes path.gz (gzip -1) and path.zst (zstd -3) when asked."""
    if gz:
        if not shutil.which("gzip"):
            sys.exit("%s: gzip not found" % who)
        with open(path + ".gz", "wb") as f:
            subprocess.run(["gzip", "-1", "-c", path], stdout=f, check=True)
    if zst:
        if not shutil.which("zstd"):
            sys.exit("%s: zstd not found" % who)
        subprocess.run(["zstd", "-q", "-f", "-3", "-T0", path, "-o", path + ".zst"], check=True)


def hms(t):
    """tqdm's format_interval: MM:SS, or H:MM:SS past an hour."""
    h, m, s = t // 3600, t // 60 % 60, t % 60
    return "%d:%02d:%02d" % (h, m, s) if h else "%02d:%02d" % (m, s)


class Gen:
    def __init__(self, args):
        self.a = args
        self.rng = random.Random(args.seed)
        self.R = args.ranks
        self.hosts = ["node-%02d" % (r // 8) for r in range(self.R)]
        self.pids = [20000 + 37 * r for r in range(self.R)]
        self.step = 0
        self.t = 0.0  # seconds since 2024-05-01 12:00:00
        self.loss = 2.9
        self.lr = 5e-5

    # -- time stamps -------------------------------------------------------------------------
    def ts(self, sep=","):
        t = self.t
        s = int(t)
        ms = int((t - s) * 1000)
        d, s = divmod(s, 86400)
        h, s = divmod(s, 3600)
        m, s = divmod(s, 60)
        return "2024-05-%02d %02d:%02d:%02d%s%03d" % (1 + d, 12 + h if d == 0 else h, m, s, sep, ms)

    # -- healthy line kinds ------------------------------------------------------------------
    def nccl_info(self, r):
        rng = self.rng
        h, p = self.hosts[r], self.pids[r]
        tid = p + rng.randrange(1, 400)
        lr = r % 8
        k = rng.randrange(10)
        if k == 0:
            msg = "NCCL INFO Bootstrap : Using eth0:10.0.%d.%d<0>" % (r // 8, 10 + r % 8)
        elif k == 1:
            msg = "NCCL INFO NET/Plugin: No plugin found (libnccl-net.so)"
        elif k == 2:
            msg = "NCCL INFO cudaDriverVersion 12020"
        elif k == 3:
            msg = "NCCL INFO Channel %02d/0 : %d[%d] -> %d[%d] via P2P/IPC/read" % (
                rng.randrange(32), r, lr, (r + 1) % self.R, (lr + 1) % 8)
        elif k == 4:
            msg = "NCCL INFO comm 0x%x rank %d nRanks %d nNodes %d localRanks 8 localRank %d MNNVL 0" % (
                0x55d0a0000000 + rng.randrange(1 << 24), r, self.R, max(1, self.R // 8), lr)
        elif k == 5:
            msg = "NCCL INFO Trees [0] %d/-1/-1->%d->%d [1] %d/-1/-1->%d->%d" % (
                (r + 1) % self.R, r, (r - 1) % self.R, (r + 1) % self.R, r, (r - 1) % self.R)
        elif k == 6:
            msg = "NCCL INFO Connected all rings"
        elif k == 7:
            msg = "NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth0"
        elif k == 8:
            msg = "NCCL INFO P2P Chunksize set to 524288"
        else:
            msg = "NCCL INFO comm 0x%x rank %d nranks %d cudaDev %d nvmlDev %d busId %x0 commId 0x%x - Init COMPLETE" % (
                0x55d0a0000000 + rng.randrange(1 << 24), r, self.R, lr, lr, 0x18 + lr,
                rng.getrandbits(64))
        return "%s:%d:%d [%d] %s" % (h, p, tid, lr, msg)

    def tqdm(self, total):
        rng = self.rng
        n = self.step % (total + 1)
        pct = n * 100 // total
        fill = pct // 10
        bar = "\u2588" * fill + ("\u258c" if pct % 10 >= 5 else " ") + " " * (9 - fill)
        bar = bar[:10]
        el = int(n * 0.75)
        rem = int((total - n) * 0.7)
        return "%3d%%|%s| %d/%d [%s<%s, %5.2fit/s]" % (
            pct, bar, n, total, hms(el), hms(rem), 1.2 + rng.random())

    def hf_dict(self):
        rng = self.rng
        return "{'loss': %.4f, 'grad_norm': %.6f, 'learning_rate': %.6e, 'epoch': %.2f}" % (
            self.loss, 0.2 + rng.random() * 2, self.lr, self.step / 5000.0)

    def pylog(self, r):
        rng = self.rng
        k = rng.randrange(6)
        if k == 0:
            return "%s - INFO - __main__ - Step %d: consumed %d samples, throughput %.1f samples/s" % (
                self.ts(), self.step, self.step * 8 * self.R, 90 + rng.random() * 20)
        if k == 1:
            return "%s - INFO - torch.distributed.distributed_c10d - Rank %d: Completed store-based barrier for key:store_based_barrier_key:%d with %d nodes." % (
                self.ts(), r, rng.randrange(1, 4), self.R)
        if k == 2:
            return "%s - WARNING - transformers.trainer - Gradient accumulation steps mismatch, continuing (step %d)" % (
                self.ts(), self.step)
        if k == 3:
            return "%s | INFO | data.loader | shard %05d/%05d opened, %d records, cache hit ratio %.3f" % (
                self.ts(), rng.randrange(4096), 4096, rng.randrange(10000, 99999), rng.random())
        if k == 4:
            return "INFO:root:eval step %d: accuracy=%.4f perplexity=%.3f" % (
                self.step, rng.random(), 5 + rng.random() * 10)
        return "%s - INFO - checkpoint - saved optimizer state shard %d of %d in %.2fs" % (
            self.ts(), r, self.R, rng.random() * 4)

    def deepspeed(self, r):
        rng = self.rng
        k = rng.randrange(3)
        if k == 0:
            return "[%s] [INFO] [logging.py:96:log_dist] [Rank %d] step=%d, skipped=0, lr=[%.6e], mom=[(0.9, 0.95)]" % (
                self.ts(), r, self.step, self.lr)
        if k == 1:
            return "[%s] [INFO] [timer.py:260:stop] epoch=0/micro_step=%d/global_step=%d, RunningAvgSamplesPerSec=%.4f, CurrSamplesPerSec=%.4f, MemAllocated=%.2fGB, MaxMemAllocated=%.2fGB" % (
                self.ts(), self.step * 4, self.step, 40 + rng.random() * 10, 40 + rng.random() * 10,
                20 + rng.random(), 60 + rng.random() * 5)
        return "[%s] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank %d Skipping step. Attempted loss scale: %d, reducing to %d" % (
            self.ts(), r, 1 << 16, 1 << 15) if rng.random() < 0.02 else \
            "[%s] [INFO] [checkpointing.py:529:forward] Activation Checkpointing Information: partition_activations False, contiguous_memory_optimization False, num_checkpoints %d layers" % (
                self.ts(), 32) if rng.random() < 0.9 else \
            "[%s] [INFO] [engine.py:3512:_save_zero_checkpoint] zero checkpoint saved ./out/global_step%d/zero_pp_rank_%d_mp_rank_00_optim_states.pt" % (
                self.ts(), self.step, r)

    def ansi(self, r):
        rng = self.rng
        lvl = rng.choice([("32", "INFO    "), ("33", "WARNING "), ("36", "DEBUG   ")])
        return "\x1b[32m%s\x1b[0m | \x1b[%sm\x1b[1m%s\x1b[0m | \x1b[36mtrain\x1b[0m:\x1b[36mloop\x1b[0m:\x1b[36m%d\x1b[0m - \x1b[%sm\x1b[1mstep %d loss %.4f\x1b[0m" % (
            self.ts("."), lvl[0], lvl[1], 100 + rng.randrange(300), lvl[0], self.step, self.loss)

    def long_line(self, r):
        """A few KB: a config dump, a tqdm redraw chain or a printed tensor."""
        rng = self.rng
        k = rng.randrange(3)
        if k == 0:
            parts = ['"%s_%d": %s' % (rng.choice(["hidden", "attn", "mlp", "rope", "norm", "vocab"]), i,
                                       rng.choice(["true", "false", str(rng.randrange(1, 65536)),
                                                   "%.6g" % rng.random(), '"silu"', "null"]))
                     for i in range(rng.randrange(80, 300))]
            return "Model config LlamaConfig {" + ", ".join(parts) + "}"
        if k == 1:
            total = 10000
            s0 = self.step
            out = []
            for i in range(rng.randrange(30, 120)):
                self.step = s0 + i
                out.append(self.tqdm(total))
            self.step = s0
            return "\r".join(out)
        vals = ", ".join("%.4f" % (rng.random() * 2 - 1) for _ in range(rng.randrange(300, 900)))
        return "tensor([" + vals + "], device='cuda:%d', dtype=torch.bfloat16)" % (r % 8)

    def very_long_line(self, r, nbytes):
        """About nbytes: a tqdm progress bar that never printed a newline."""
        total = 1000000
        s0 = self.step
        out = []
        size = 0
        i = 0
        while size < nbytes:
            self.step = s0 + i
            x = self.tqdm(total)
            out.append(x)
            size += len(x) + 1
            i += 1
        self.step = s0
        return "\r".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size-mb", type=float, default=100, help="target size of the log in MB (10^6 bytes)")
    ap.add_argument("--out", required=True, help="the single multi-rank log to write")
    ap.add_argument("--ranks", type=int, default=16, help="number of ranks (8..64 is realistic)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--per-rank-dir", help="also write one file per rank (rankN.log) and launcher.log here")
    ap.add_argument("--gz", action="store_true", help="also write OUT.gz (gzip -1)")
    ap.add_argument("--zst", action="store_true", help="also write OUT.zst (zstd -3)")
    ap.add_argument("--failure-lines", type=int, default=300, help="about how many real failure lines to insert")
    ap.add_argument("--very-long", type=int, default=-1, help="number of 1 MB lines (default: 2 + size/256 MB)")
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--repo", default=os.path.dirname(here))
    ap.add_argument("--corpus", default=os.path.join(os.path.dirname(os.path.dirname(here)), "shared", "corpus"))
    a = ap.parse_args()

    target = int(a.size_mb * 1000000)
    g = Gen(a)
    rng = g.rng
    R = a.ranks
    blocks = load_real_blocks(a.repo, a.corpus)
    if not blocks:
        sys.exit("gen.py: no real log lines found under %s or %s" % (a.repo, a.corpus))

    # Choose the failure blocks: about a.failure_lines lines. 70 % scattered, 30 % at the end.
    chosen, scattered, at_end, bulk_target, insert_at = choose_failures(rng, blocks, a.failure_lines, target)
    very_long = a.very_long if a.very_long >= 0 else 2 + int(a.size_mb // 256)
    vl_at = sorted(rng.randrange(bulk_target // 10, bulk_target) for _ in range(very_long))
    if very_long and target < very_long * 1100000:
        vl_at = []  # too small a file for 1 MB lines

    out, rank_files = open_outputs(a.out, a.per_rank_dir, R)

    written = 0
    buf = []
    rbufs = [[] for _ in range(R + 1)] if rank_files else None
    stats = {"lines": 0, "failure_lines": 0, "long": 0, "very_long": 0, "crlf": 0, "ansi": 0}

    def emit(r, text, eol="\n"):
        # r: rank, or -1 for launcher lines without a prefix
        nonlocal written
        line = ("[rank%d]:%s%s" % (r, "" if text.startswith(" ") else " ", text) if r >= 0 else text) + eol
        buf.append(line)
        written += len(line.encode("utf-8")) if not line.isascii() else len(line)
        stats["lines"] += 1
        if rbufs is not None:
            rbufs[r if r >= 0 else R].append(text + eol)
        if len(buf) >= 4096:
            flush()

    def flush():
        flush_lines(out, buf, rank_files, rbufs)

    def emit_block(b):
        r = rng.randrange(R)
        launcher = any("ChildFailedError" in l or "torch.distributed.elastic" in l for l in b)
        for l in b:
            emit(-1 if launcher else r, l)
            stats["failure_lines"] += 1

    # Init phase: every rank's NCCL chatter and a few logging lines.
    for r in range(R):
        for _ in range(rng.randrange(20, 40)):
            emit(r, g.nccl_info(r))
        emit(r, g.pylog(r))

    total_steps = 10000
    ii = 0
    vi = 0
    while written < bulk_target:
        g.step += 1
        g.t += 0.7 + rng.random() * 0.1
        g.loss = max(0.3, g.loss * 0.9999 + (rng.random() - 0.5) * 0.02)
        if g.step % 100 == 0:
            g.lr *= 0.999
        # per step: tqdm on rank 0, a DeepSpeed line on a few ranks, some logging chatter
        emit(0, g.tqdm(total_steps))
        if g.step % 10 == 0:
            emit(0, g.hf_dict())
        for _ in range(rng.randrange(1, 4)):
            r = rng.randrange(R)
            emit(r, g.deepspeed(r))
        for _ in range(rng.randrange(0, 3)):
            r = rng.randrange(R)
            emit(r, g.pylog(r))
        x = rng.random()
        if x < 0.05:
            r = rng.randrange(R)
            emit(r, g.nccl_info(r))
        elif x < 0.06:
            r = rng.randrange(R)
            emit(r, g.ansi(r))
            stats["ansi"] += 1
        elif x < 0.065:
            r = rng.randrange(R)
            emit(r, g.pylog(r), "\r\n")
            stats["crlf"] += 1
        elif x < 0.067:
            r = rng.randrange(R)
            emit(r, g.long_line(r))
            stats["long"] += 1
        while ii < len(insert_at) and written >= insert_at[ii]:
            emit_block(scattered[ii])
            ii += 1
        while vi < len(vl_at) and written >= vl_at[vi]:
            emit(0, g.very_long_line(0, 1 << 20))
            stats["very_long"] += 1
            vi += 1
    while ii < len(scattered):
        emit_block(scattered[ii])
        ii += 1
    for b in at_end:
        emit_block(b)
    flush()
    close_outputs(out, rank_files)

    size = os.path.getsize(a.out)
    print("gen.py: wrote %s: %.1f MB, %d lines (%d real failure lines from %d blocks, %d long, "
          "%d of 1 MB, %d CRLF, %d ANSI), %d ranks, seed %d" % (
              a.out, size / 1e6, stats["lines"], stats["failure_lines"], len(chosen), stats["long"],
              stats["very_long"], stats["crlf"], stats["ansi"], R, a.seed), file=sys.stderr)
    compress(a.out, a.gz, a.zst, "gen.py")

if __name__ == "__main__":
    main()
