"""What benches/peers.py and benches/peers_batch.py share: the optional CuPy, the rotation of
each input among copies, the timing with CUDA events and the JSON document of a run. torch is
imported only by the functions that use it (peers_batch.py --dry-run runs without it)."""
import datetime
import json
import math
import statistics
import sys

ROTATION_BYTES = 512 << 20  # the inputs' copies total at least this, so that L2 never holds one
MAX_COPIES = 8
SLOW_MS = 100  # calls slower than this get --slow-reps timed runs


def import_cupy():
    """CuPy, or None (after a note on stderr) where it cannot be imported: it is optional."""
    try:
        import cupy
    except Exception as e:  # CuPy is optional
        print(f"cupy unavailable: {e}", file=sys.stderr)
        return None
    return cupy


def copies_for(nbytes):
    """How many copies of an input of nbytes the timings rotate among."""
    return max(1, min(MAX_COPIES, math.ceil(ROTATION_BYTES / nbytes)))


def timed(fn, copies, reps, slow_reps, start=0):
    """Median and minimum ms of fn over the rotated copies, and the number of timed runs: two
    warm-up calls, one more whose time decides the runs (slow_reps at most for a call slower
    than SLOW_MS), then the timed runs, each between CUDA events, the first on copy `start`."""
    import torch

    for i in range(2):
        fn(copies[i % len(copies)])
    torch.cuda.synchronize()
    begin = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    begin.record()
    fn(copies[0])
    end.record()
    end.synchronize()
    if begin.elapsed_time(end) > SLOW_MS:
        reps = min(reps, slow_reps)
    times = []
    for r in range(reps):
        begin.record()
        fn(copies[(start + r) % len(copies)])
        end.record()
        end.synchronize()
        times.append(begin.elapsed_time(end))
    return statistics.median(times), min(times), reps


def write_json(path, cupy, results):
    """Writes the JSON document of a run to path (nothing without one): the device, the date,
    the command, the versions of torch and CuPy (None without it), how it was timed, and
    results."""
    if not path:
        return
    import torch

    doc = dict(device=torch.cuda.get_device_name(0), date=datetime.date.today().isoformat(),
               command=" ".join(sys.argv), torch=torch.__version__,
               cupy=getattr(cupy, "__version__", None),
               timing="CUDA events around each call after warm-up; median of --reps runs; inputs rotated",
               floor="torch.sum over the same array, in its own dtype", results=results)
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
