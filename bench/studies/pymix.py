#!/usr/bin/env python3
"""bench/studies/pymix.py - a study, not part of the build (twenty-third
round, docs/performance.md): what rscflight.loads of one big payload does
to itself and to the smaller payloads decoded between its calls, through
the process's allocator (which decoders the binding keeps, and glibc's
trim threshold, move page faults from one call to the next).

Each round: one loads of BIG, then --each loads of every SMALL. Prints the
median time of a BIG loads and of a SMALL one, and the minor page faults
a round, BIG's and the SMALLs' apart. Run two builds in alternating
processes, since their allocator states are what differs:

    for b in OLD/build-release/python build-release/python; do
        PYTHONPATH=$b /usr/bin/python3 bench/studies/pymix.py BIG SMALL...
    done

--make-text-page OUT writes the 4.7 MB page of text rows the round used
(1,500 T rows of 480 words, a root of 1,500 elements showing them) and
exits; synth-4M is `bench/python/synth.py --size 4M --seed 1 OUT`.
"""

import argparse
import random
import resource
import statistics
import time


def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def text_page():
    rnd = random.Random(1)
    words = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor".split()
    rows, kids = [], []
    for k, i in enumerate(range(2, 1502)):
        t = " ".join(rnd.choice(words) for _ in range(480)).encode()
        rows.append(b"%x:T%x," % (i, len(t)) + t)
        kids.append(b'["$","p","%d",{"children":"$%x"}]' % (k, i))
    return b"".join(rows) + b'0:["$","div",null,{"children":[' + b",".join(kids) + b"]}]\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--make-text-page", metavar="OUT")
    ap.add_argument("big", nargs="?")
    ap.add_argument("small", nargs="*")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--each", type=int, default=5, help="loads of each SMALL a round")
    a = ap.parse_args()
    if a.make_text_page:
        with open(a.make_text_page, "wb") as f:
            f.write(text_page())
        return
    if not a.big or not a.small:
        ap.error("BIG and at least one SMALL")
    import rscflight  # noqa: E402 (not needed to write the text page)
    big = open(a.big, "rb").read()
    smalls = [open(f, "rb").read() for f in a.small]
    t_big, t_small, f_big, f_small = [], [], 0, 0
    for _ in range(a.rounds):
        f0 = faults()
        t = time.perf_counter()
        rscflight.loads(big)
        t_big.append(time.perf_counter() - t)
        f1 = faults()
        for s in smalls:
            for _ in range(a.each):
                t = time.perf_counter()
                rscflight.loads(s)
                t_small.append(time.perf_counter() - t)
        f_big += f1 - f0
        f_small += faults() - f1
    print("big %.2f ms, small %.3f ms (medians); faults a round: big %d, the small ones %d"
          % (statistics.median(t_big) * 1e3, statistics.median(t_small) * 1e3,
             f_big // a.rounds, f_small // a.rounds))


if __name__ == "__main__":
    main()
