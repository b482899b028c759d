"""Posts the first 1,000 vectors of QUERIES (.fvecs) to a ParqDB server as
four 250-vector batch searches (k 10, keys only), REPS times after one warm
pass, and prints the query vectors answered per second (wall clock).

    python3 bench/serve/batch_client.py PORT INDEX QUERIES REPS [NPROBE]
"""
import json
import sys
import time
import urllib.request

import numpy as np


def main() -> None:
    port, index, path, reps = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    nprobe = int(sys.argv[5]) if len(sys.argv) > 5 else 48
    raw = np.fromfile(path, dtype=np.int32)
    d = int(raw[0])
    qs = raw.reshape(-1, d + 1)[:1000, 1:].copy().view(np.float32)
    bodies = [json.dumps({"vectors": qs[i:i + 250].tolist(), "k": 10, "nprobe": nprobe,
                          "keys_only": True}).encode() for i in range(0, len(qs), 250)]
    url = f"http://127.0.0.1:{port}/v1/indexes/{index}/search"

    def post(b: bytes) -> None:
        req = urllib.request.Request(url, data=b, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req) as r:
            r.read()

    for b in bodies:
        post(b)
    t0 = time.perf_counter()
    for _ in range(reps):
        for b in bodies:
            post(b)
    print(f"{reps * len(qs) / (time.perf_counter() - t0):.0f}")


if __name__ == "__main__":
    main()
