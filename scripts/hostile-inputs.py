#!/usr/bin/env python3
"""hostile-inputs.py -- writes the hostile-input set of tests/hostile/ into OUTDIR.

    python3 scripts/hostile-inputs.py OUTDIR

Every file is small on disk and made at test time (nothing hostile is committed): memory and
CPU bombs (compressed flight-recorder dumps that expand to 250 MB, configs and references
nested 200,000 levels deep, YAML aliases that fan out), ranks beyond what ddx models, text that
is not plain UTF-8 (leading NULs, NUL padding, UTF-16 and UTF-32), damaged and unusual
containers (truncated tar.gz/tar.zst/tar.xz, a zip member with a bad CRC, bzip2 and lz4
streams), unreadable files, names that carry terminal escapes, ddx's own reports saved into the
job's folder, and a job of 100,000 ranks. tests/hostile/cases.t says what ddx must do with each.
Only the Python standard library is used; the zstd and lz4 command-line tools (Debian's zstd and
lz4 packages, installed by scripts/install-deps.sh) write the .zst and .lz4 files.
"""
import bz2
import gzip
import io
import json
import lzma
import os
import pickle
import struct
import subprocess
import sys
import tarfile
import zipfile
import zlib

OUT = sys.argv[1]
NRANKS = 4
FAILING = 2

# ---- the job: four ranks of a torchrun job, rank 2 runs out of GPU memory, the others time out


def rank_log(r, steps=3000, fail=True):
    """One rank's log: training steps, then (when fail) its failure line."""
    lines = []
    for i in range(steps):
        lines.append("[rank%d]:[I501 11:%02d:%02d.000000 train.py:88] step %d loss %.4f lr 3e-4"
                     % (r, (i // 60) % 60, i % 60, i, 2.0 - i * 0.0001))
    if not fail:
        return "\n".join(lines) + "\n"
    if r == FAILING:
        lines += [
            "[rank2]: Traceback (most recent call last):",
            '[rank2]:   File "train.py", line 120, in <module>',
            "[rank2]:     loss.backward()",
            "[rank2]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. "
            "GPU 2 has a total capacity of 79.15 GiB of which 1.21 GiB is free. Process 4242 "
            "has 77.92 GiB memory in use. Of the allocated memory 75.10 GiB is allocated by "
            "PyTorch, and 1.32 GiB is reserved by PyTorch but unallocated.",
        ]
    else:
        lines.append(
            "[rank%d]:[E501 12:00:0%d.000000000 ProcessGroupNCCL.cpp:616] [Rank %d] Watchdog "
            "caught collective operation timeout: WorkNCCL(SeqNum=4821, OpType=ALLREDUCE, "
            "NumelIn=1024, NumelOut=1024, Timeout(ms)=600000) ran for 600012 milliseconds "
            "before timing out." % (r, r, r))
    return "\n".join(lines) + "\n"


OOM_LOG = rank_log(FAILING, steps=40)


def path(*parts):
    p = os.path.join(OUT, *parts)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    return p


def write(rel, data, mode="wb"):
    with open(path(rel), mode) as f:
        f.write(data)


def tool(args, data):
    return subprocess.run(args, input=data, stdout=subprocess.PIPE, check=True).stdout


# ---- 1. memory and CPU bombs ---------------------------------------------------------------

ENTRY = {"record_id": 0, "pg_id": 0, "process_group": ["0", "default_pg"],
         "collective_seq_id": 1, "p2p_seq_id": 0, "op_id": 1, "profiling_name": "nccl:all_reduce",
         "time_created_ns": 1714564800000000000, "input_sizes": [[1024]], "input_dtypes": ["Float"],
         "output_sizes": [[1024]], "output_dtypes": ["Float"], "state": "completed",
         "retired": True, "timeout_ms": 600000, "is_p2p": False,
         "frames": [{"name": "all_reduce", "filename": "distributed_c10d.py", "line": 2288}] * 4}
HEAD = {"version": "2.4", "comm_lib_version": "2.20.5",
        "pg_config": {"0": {"name": "0", "desc": "default_pg", "ranks": "[0, 1, 2, 3]"}}}


def fr_json_bomb(rel, total=250 << 20):
    """A JSON dump of `total` bytes of entries, xz-compressed to a few tens of KiB."""
    head = json.dumps(HEAD)[:-1] + ', "entries": ['
    one = json.dumps(ENTRY) + ","
    block = (one * 1000).encode()
    with lzma.open(path(rel), "wb", preset=0) as f:
        f.write(head.encode())
        for _ in range(total // len(block)):
            f.write(block)
        f.write(json.dumps(ENTRY).encode() + b"]}")


def pk(v):
    """Pickle opcodes (protocol 2, no memo) for plain data, so repeated values stay repeated."""
    if v is None:
        return b"N"
    if v is True or v is False:
        return b"\x88" if v else b"\x89"
    if isinstance(v, int):
        if -(1 << 31) <= v < (1 << 31):
            return b"J" + struct.pack("<i", v)
        raw = v.to_bytes((v.bit_length() + 8) // 8, "little", signed=True)
        return b"\x8a" + bytes([len(raw)]) + raw
    if isinstance(v, str):
        raw = v.encode()
        return b"X" + struct.pack("<I", len(raw)) + raw
    if isinstance(v, list):
        return b"](" + b"".join(pk(x) for x in v) + b"e"
    if isinstance(v, dict):
        return b"}(" + b"".join(pk(k) + pk(x) for k, x in v.items()) + b"u"
    raise TypeError(v)


def fr_pickle_bomb(rel, total=250 << 20):
    """A protocol-2 pickle of the same dump: its entries list filled 1,000 entries per APPENDS
    (no memo, so every entry is a new value), xz-compressed."""
    assert pickle.loads(b"\x80\x02" + pk(HEAD) + b".") == HEAD
    batch = b"(" + pk(ENTRY) * 1000 + b"e"  # MARK, 1000 entries, APPENDS
    with lzma.open(path(rel), "wb", preset=0) as f:
        f.write(b"\x80\x02" + pk(HEAD)[:-1] + pk("entries") + b"]")  # the dict stays open
        for _ in range(total // len(batch)):
            f.write(batch)
        f.write(b"u.")  # SETITEMS, STOP


fr_json_bomb("fr-json-bomb/nccl_trace_rank_0.xz")
write("fr-json-bomb/console.log", OOM_LOG, "w")
fr_pickle_bomb("fr-pickle-bomb/nccl_trace_rank_0.xz")
write("fr-pickle-bomb/console.log", OOM_LOG, "w")

# configs and a reference nested 200,000 levels deep (400 KB each)
write("config-deep-yaml/config.yaml", "compute_environment: LOCAL_MACHINE\nx: " + "[" * 200000 + "\n", "w")
write("config-deep-yaml/train.log", OOM_LOG, "w")
write("config-deep-json/ds_config.json", '{"zero_optimization": ' + "[" * 200000 + "\n", "w")
write("config-deep-json/train.log", OOM_LOG, "w")
write("kb-deep/cuda/deep-nesting.md",
      "---\nid: deep-nesting\ntitle: x\ncategory: cuda\nx: " + "[" * 200000 + "\n---\n", "w")
write("kb-deep-indent/cuda/deep-indent.md",
      "---\nid: deep-indent\n" + "".join(" " * i + "k%d:\n" % i for i in range(2000)) + "---\n",
      "w")
# YAML aliases: 9 levels of 20 aliases each name 20^8 paths through a 3 KB file
y = ["a0: &a0 {distributed_type: FSDP, mixed_precision: bf16}"]
for i in range(1, 9):
    y.append("a%d: &a%d {%s}" % (i, i, ", ".join("k%d: *a%d" % (j, i - 1) for j in range(20))))
write("config-aliases/config.yaml", "\n".join(y) + "\n", "w")
write("config-aliases/train.log", OOM_LOG, "w")

# ---- 2. ranks beyond the model ---------------------------------------------------------------

dump = dict(HEAD, entries=[dict(ENTRY, collective_seq_id=i) for i in range(1, 5)])
write("rank-70000/nccl_trace_rank_70000", pickle.dumps(dump, protocol=2))
write("rank-70000/console.log", OOM_LOG, "w")
write("rank-65536/trace.json", json.dumps(dict(dump, rank=65536)), "w")
write("rank-65536/console.log", OOM_LOG, "w")
write("rank-prefix-99999/console.log",
      OOM_LOG + "[rank99999]: RuntimeError: a line of a rank ddx does not model\n", "w")

# ---- 3. text that is not plain UTF-8 ---------------------------------------------------------

write("nul-lead/rank2.log", b"\0" * 8192 + OOM_LOG.encode())
write("nul-lead-big/rank2.log", b"\0" * (3 << 20) + OOM_LOG.encode())
half = OOM_LOG.encode().split(b"\n")
write("nul-pad/rank2.log", b"\n".join(half[:20]) + b"\n" + b"\0" * 200000 + b"\n".join(half[20:]))
write("utf16/train.log", OOM_LOG.encode("utf-16"))            # with its byte order mark
write("utf16be-nobom/train.log", OOM_LOG.encode("utf-16-be"))
write("utf32/train.log", OOM_LOG.encode("utf-32"))
write("utf16-nul-lead/train.log", b"\0" * 4096 + OOM_LOG.encode("utf-16-le"))

# ---- 4. containers: damage, bad CRC, other codecs -------------------------------------------


def tar_bytes(members):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as t:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = 1714564800
            t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


# the failing rank's short log between two long healthy ones; each archive is cut 20 KB into
# the member after it, so every byte of the failing rank's log is before the cut
members = [("job/rank0.log", rank_log(0).encode()), ("job/rank2.log", OOM_LOG.encode()),
           ("job/rank1.log", rank_log(1).encode()), ("job/rank3.log", rank_log(3).encode())]
tar = tar_bytes(members)
cut_at = tar.index(b"job/rank1.log") + 20000


def cut_offset(comp, dec):
    """The first length of comp whose decoding reaches cut_at bytes."""
    out = 0
    for i in range(0, len(comp), 16):
        out += len(dec.decompress(comp[i:i + 16]))
        if out >= cut_at:
            return i + 16
    return len(comp)


gz = gzip.compress(tar, 6, mtime=0)
write("trunc-tar-gz/job.tar.gz", gz[:cut_offset(gz, zlib.decompressobj(31))])
xz = lzma.compress(tar, preset=6)
write("trunc-tar-xz/job.tar.xz", xz[:cut_offset(xz, lzma.LZMADecompressor())])
# zstd: two frames (one stream to a reader), the second cut a third of the way in
first, second = (tool(["zstd", "-q", "-c", "-3"], b) for b in (tar[:cut_at], tar[cut_at:]))
write("trunc-tar-zst/job.tar.zst", first + second[: len(second) // 3])

# a zip whose failing member has a wrong CRC: its bytes decode, its check fails
zbuf = io.BytesIO()
with zipfile.ZipFile(zbuf, "w", zipfile.ZIP_DEFLATED) as z:
    for name, data in members:
        z.writestr(name, data)
zdata = bytearray(zbuf.getvalue())
# the CRC of job/rank2.log in its local header and in the central directory
for sig, off in ((b"PK\x03\x04", 14), (b"PK\x01\x02", 16)):
    at = 0
    while True:
        at = zdata.find(sig, at)
        if at < 0:
            break
        name_len = struct.unpack_from("<H", zdata, at + (26 if sig == b"PK\x03\x04" else 28))[0]
        name_at = at + (30 if sig == b"PK\x03\x04" else 46)
        if zdata[name_at:name_at + name_len] == b"job/rank2.log":
            zdata[at + off] ^= 0x5a
        at += 4
write("zip-bad-crc/job.zip", bytes(zdata))

write("bz2/rank2.log.bz2", bz2.compress(OOM_LOG.encode()))
write("lz4/rank2.log.lz4", tool(["lz4", "-q", "-c"], OOM_LOG.encode()))
write("tar-bz2/job.tar.bz2", bz2.compress(tar_bytes(members)))
write("tar-lz4/job.tar.lz4", tool(["lz4", "-q", "-c"], tar_bytes(members)))

# ---- 5. unreadable files, names with escapes, ddx's own reports ------------------------------

os.makedirs(path("unreadable", "x"), exist_ok=True)
for r in (0, 1, 3):
    write("unreadable/rank%d.log" % r, rank_log(r, steps=20), "w")
os.symlink("/nonexistent/ddx-hostile/rank2.log", path("unreadable", "rank2.log"))
os.rmdir(path("unreadable", "x"))

esc = "\x1b[2J\x1b[H\x1b]0;pwned\x07DIAGNOSIS: all clear\x1b[8m\u009b31m"
write("escapes/job.tar", tar_bytes([("job/rank2%s.log" % esc, OOM_LOG.encode())]))

os.makedirs(path("empty", "x"), exist_ok=True)
os.rmdir(path("empty", "x"))
os.makedirs(path("only-unreadable", "x"), exist_ok=True)
os.rmdir(path("only-unreadable", "x"))
os.symlink("/nonexistent/ddx-hostile/rank0.log", path("only-unreadable", "rank0.log"))
write("only-binary/model.bin", bytes(range(256)) * 64)

# a healthy job's folder holding the report of an earlier run (the failure lines it quotes
# must not count again)
write("saved-report/rank0.log", rank_log(0, steps=50, fail=False), "w")

# ---- 6. confidence ----------------------------------------------------------------------------

# the failing rank's log alone, then the whole job beside it (plain UTF-8 files): the other
# ranks time out and report their communicator aborted by the failed peer
write("plain-rank2/rank2.log", OOM_LOG, "w")
for r in range(NRANKS):
    write("plain-job/rank%d.log" % r, rank_log(r, steps=40) + (
        "" if r == FAILING else
        "[rank%d]: torch.distributed.DistBackendError: NCCL communicator was aborted on rank "
        "%d.\n[rank%d]: RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1970, remote process "
        "exited or there was a network error, NCCL version 2.20.5\n" % (r, r, r)), "w")

# rank 2's own pid (NCCL's init line) is the process its OOM lists
write("own-pid/rank2.log",
      "[rank2]:node1:4242:4242 [2] NCCL INFO comm 0x55d0c3a0 rank 2 nranks 4 cudaDev 2 busId "
      "41000 - Init COMPLETE\n" + OOM_LOG, "w")
# one flight-recorder dump; a CUDA memory snapshot (a pickle, no collective entries)
write("fr-one-dump/nccl_trace_rank_0", pickle.dumps(dump, protocol=2))
write("fr-one-dump/console.log", OOM_LOG, "w")
write("fr-snapshot/snapshot.pickle",
      pickle.dumps({"segments": [{"device": 0, "address": 1 << 40, "total_size": 2 << 20,
                                  "blocks": [{"size": 1 << 20, "state": "active_allocated"}]}],
                    "device_traces": [[]]}, protocol=2))
write("fr-snapshot/console.log", OOM_LOG, "w")

# ---- 7. a job that stopped making progress long before the time limit ended it -------------

gap = []
for r in range(2):
    for i in range(1, 51):
        gap.append("[rank%d]:[I501 09:%02d:%02d.000000 train.py:88] step %d/1000 loss 2.0"
                   % (r, 8 + i // 60, i % 60, i))
gap.append("[rank0]:[I501 11:00:30.000000 train.py:90] heartbeat")
gap.append("slurmstepd: error: *** JOB 4242 ON node001 CANCELLED AT 2024-05-01T11:01:00 DUE TO "
           "TIME LIMIT ***")
write("progress-gap/job.log", "\n".join(gap) + "\n", "w")

# ---- 8. scale: a job of 100,000 ranks --------------------------------------------------------

with open(path("ranks-100k", "console.log"), "w") as f:
    # each rank's NCCL init line first: a host, a pid and a GPU per rank (facts and hosts of
    # 100,000 ranks, once quadratic)
    for r in range(100000):
        f.write("[rank%d]:node%d:%d:%d [%d] NCCL INFO comm 0x55d0c3a0 rank %d nranks 100000 "
                "cudaDev %d busId %x000 - Init COMPLETE\n"
                % (r, r // 8, 10000 + r, 10000 + r, r % 8, r, r % 8, 0x10 + r % 8))
    for r in range(100000):
        if r == 77777:
            continue
        f.write("[rank%d]:[E501 12:00:00.000000000 ProcessGroupNCCL.cpp:616] [Rank %d] Watchdog "
                "caught collective operation timeout: WorkNCCL(SeqNum=4821, OpType=ALLREDUCE, "
                "NumelIn=1024, NumelOut=1024, Timeout(ms)=600000) ran for 600012 milliseconds "
                "before timing out.\n" % (r, r))
