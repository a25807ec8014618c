"""`shapescript run FILE --nproc-per-node N`: torchrun's own launcher (torch.distributed.run, elastic
rendezvous, one or many machines) starting train.py on every rank. The CLI runs
`python -I launch.py TORCHRUN_FLAGS... train.py spec.json`; this adds only what the CLI's contract
needs around torchrun's `run`: Ctrl-C reaches it, and its endings are the CLI's exit statuses.

torchrun passes SIGINT on to every rank (train.py, which agrees on a step with the others, saves and
exits 130) and waits for them; a rank that fails makes torchrun stop the others, and this names it
and says why: its exit status or signal (the rank's own `error: rank R: ...` line said the rest).
"""

from __future__ import annotations

import os
import signal
import sys


def main(argv):
    # The CLI starts Python with SIGINT held, so that a Ctrl-C while it starts waits for here;
    # torchrun's handlers are set as it starts the ranks, which unblock it for themselves.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    if "OMP_NUM_THREADS" not in os.environ:  # torchrun's default is 1, with a banner; the cores shared out instead
        per_node = int(argv[argv.index("--nproc-per-node") + 1]) if "--nproc-per-node" in argv else 1
        os.environ["OMP_NUM_THREADS"] = str(max(1, (os.cpu_count() or 1) // max(1, per_node)))
    try:
        import torch.distributed.run as torchrun
        from torch.distributed.elastic.multiprocessing import SignalException
        from torch.distributed.elastic.multiprocessing.errors import ChildFailedError
    except ImportError as e:
        print(f"error: `shapescript run --nproc-per-node` needs torch's torchrun in this Python ({sys.executable}): {e}", file=sys.stderr)
        return 1
    if "--verbose" not in argv:  # torchrun's notes on the ranks it closes: the ranks and this say what happened
        import logging

        for name in [n for n in logging.root.manager.loggerDict if n.startswith("torch.distributed")]:
            logging.getLogger(name).setLevel(logging.CRITICAL)  # each sets its own level (LOGLEVEL), not inherited
    try:
        torchrun.run(torchrun.parse_args(argv))
    except SignalException as e:  # the ranks were passed the signal and given time to save
        return 130 if e.sigval == signal.SIGINT else 128 + int(e.sigval)
    except ChildFailedError as e:
        failures = sorted(e.failures.items())
        if all(f.exitcode == 130 for _, f in failures):  # every rank stopped on Ctrl-C, and said what it saved
            return 130
        for rank, failure in failures:
            if failure.exitcode == -signal.SIGTERM:  # torchrun's own, to the others when a rank fails
                why = f"was stopped with signal {int(signal.SIGTERM)} (SIGTERM), as torchrun stops every rank when one fails"
            elif failure.exitcode < 0:
                why = f"was killed by signal {failure.exitcode * -1} ({failure.signal_name()})"
            else:
                why = f"exited with exit status {failure.exitcode}"
            print(f"error: rank {rank} (local rank {failure.local_rank}, pid {failure.pid}) {why}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
