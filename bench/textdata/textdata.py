#!/usr/bin/python3
"""Hard text-embedding benchmark set from Debian's package descriptions.

    /usr/bin/python3 bench/textdata/textdata.py TRANSLATION-EN OUTDIR [--dim 256] [--seed 14]
    go run ./bench/textdata OUTDIR          # then: Parquet (id, text, vec) from OUTDIR's files

Corpus: Debian 12 (bookworm) main `Translation-en` (the English long
descriptions of every binary package; fetch with
`apt-get update -o Acquire::Languages=en`, the file is
/var/lib/apt/lists/deb.debian.org_debian_dists_bookworm_main_i18n_Translation-en.lz4,
decompress with `/usr/lib/apt/apt-helper cat-file FILE > Translation-en`).
Documents are the unique short descriptions and the unique long-description
paragraphs of at least 40 characters (whitespace normalised), sorted.

Embedding: TF-IDF (sublinear tf, smooth idf, vocabulary = terms in at least
2 base documents, rows L2-normalised) and a seeded randomized truncated SVD
(LSA, uncentred, 4 power iterations) to DIM dimensions, fitted on the base
documents only; every vector (base and query) is X·V, L2-normalised, so
cosine ranks like L2. Base documents whose term counts equal an earlier
document's, or that have no vocabulary term, are dropped (no exact ties).

Queries: 1,000 documents held out before fitting (a seeded permutation,
first 1,000 with at least 3 vocabulary terms). Ground truth: exact top-100
by inner product in float64 over the base (ties broken by id).

Writes OUTDIR/text-base.fvecs, text-queries.fvecs, text-gt.ivecs (top-100
base ids per query), text-base.tsv and text-queries.tsv (id TAB text) and
text-manifest.txt (source checksum, counts, numpy version, output checksums).
Deterministic for a given input, seed and numpy/BLAS: inputs are sorted, all
randomness is seeded, BLAS runs on one thread.
"""
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import hashlib
import re
import sys

import numpy as np

TOKEN = re.compile(r"[a-z][a-z0-9]+")


def documents(path):
    shorts, paras = set(), set()
    with open(path, encoding="utf-8") as f:
        recs = f.read().split("\n\n")
    for r in recs:
        lines = r.split("\n")
        for i, line in enumerate(lines):
            if line.startswith("Description-en: "):
                shorts.add(" ".join(line[len("Description-en: "):].split()))
                cur, ps = [], []
                for l in lines[i + 1:]:
                    if l.strip() == ".":
                        ps.append(" ".join(cur))
                        cur = []
                    else:
                        cur.append(l.strip())
                ps.append(" ".join(cur))
                for p in ps:
                    p = " ".join(p.split())
                    if len(p) >= 40:
                        paras.add(p)
                break
    docs = sorted(d for d in shorts | paras if d)
    return docs


def counts(text):
    c = {}
    for t in TOKEN.findall(text.lower()):
        c[t] = c.get(t, 0) + 1
    return c


class CSR:
    """A row-compressed sparse matrix in numpy (no scipy on Debian's python3 by default)."""

    def __init__(self, indptr, indices, data, ncols):
        self.indptr, self.indices, self.data, self.ncols = indptr, indices, data, ncols
        self.nrows = len(indptr) - 1

    def matmul(self, m, budget=1 << 18):
        """self @ m for a dense m (ncols × l); every row has at least one entry."""
        out = np.empty((self.nrows, m.shape[1]), dtype=np.float64)
        s = 0
        while s < self.nrows:
            # rows [s, e) hold at most budget entries (or one row)
            e = int(np.searchsorted(self.indptr, self.indptr[s] + budget, side="right")) - 1
            e = min(max(e, s + 1), self.nrows)
            a, b = self.indptr[s], self.indptr[e]
            prod = self.data[a:b, None] * m[self.indices[a:b]]
            out[s:e] = np.add.reduceat(prod, self.indptr[s:e] - a, axis=0)
            s = e
        return out

    def transpose(self):
        order = np.argsort(self.indices, kind="stable")
        rows = np.repeat(np.arange(self.nrows), np.diff(self.indptr))
        cols = self.indices[order]
        indptr = np.zeros(self.ncols + 1, dtype=np.int64)
        np.add.at(indptr, cols + 1, 1)
        return CSR(np.cumsum(indptr), rows[order], self.data[order], self.nrows)


def tfidf(docs_counts, vocab, idf):
    indptr, indices, data = [0], [], []
    for c in docs_counts:
        items = sorted((vocab[t], n) for t, n in c.items() if t in vocab)
        w = np.array([(1 + np.log(n)) * idf[j] for j, n in items])
        w /= np.linalg.norm(w)
        indices.extend(j for j, _ in items)
        data.extend(w.tolist())
        indptr.append(len(indices))
    return CSR(np.array(indptr, dtype=np.int64), np.array(indices, dtype=np.int64),
               np.array(data, dtype=np.float64), len(vocab))


def rsvd(x, k, seed, oversample=32, iters=4):
    rng = np.random.Generator(np.random.PCG64(seed))
    xt = x.transpose()
    y = x.matmul(rng.standard_normal((x.ncols, k + oversample)))
    q, _ = np.linalg.qr(y)
    for _ in range(iters):
        z, _ = np.linalg.qr(xt.matmul(q))
        q, _ = np.linalg.qr(x.matmul(z))
    b = xt.matmul(q).T  # (k+p) × ncols
    _, s, vt = np.linalg.svd(b, full_matrices=False)
    return vt[:k].T, s[:k]


def write_fvecs(path, a):
    a = np.ascontiguousarray(a, dtype=np.float32)
    hdr = np.full((a.shape[0], 1), a.shape[1], dtype=np.int32)
    np.hstack([hdr, a.view(np.int32)]).tofile(path)


def write_ivecs(path, a):
    a = np.ascontiguousarray(a, dtype=np.int32)
    hdr = np.full((a.shape[0], 1), a.shape[1], dtype=np.int32)
    np.hstack([hdr, a]).tofile(path)


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for b in iter(lambda: f.read(1 << 20), b""):
            h.update(b)
    return h.hexdigest()


def main(argv):
    dim, seed, nq, gtk = 256, 14, 1000, 100
    args = []
    i = 0
    while i < len(argv):
        if argv[i] == "--dim":
            dim = int(argv[i + 1]); i += 2
        elif argv[i] == "--seed":
            seed = int(argv[i + 1]); i += 2
        else:
            args.append(argv[i]); i += 1
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    src, out = args
    os.makedirs(out, exist_ok=True)
    docs = documents(src)
    print(f"textdata: {len(docs)} unique documents from {src}", file=sys.stderr)
    dc = [counts(d) for d in docs]
    rng = np.random.Generator(np.random.PCG64(seed))
    perm = rng.permutation(len(docs))
    # Queries first (held out), chosen among documents with >= 3 distinct terms;
    # the vocabulary is then fitted on the rest.
    qidx = [int(j) for j in perm if len(dc[j]) >= 3][:nq]
    qset = set(qidx)
    base_idx = [j for j in range(len(docs)) if j not in qset]
    df = {}
    for j in base_idx:
        for t in dc[j]:
            df[t] = df.get(t, 0) + 1
    terms = sorted(t for t, n in df.items() if n >= 2)
    vocab = {t: i for i, t in enumerate(terms)}
    n = len(base_idx)
    idf = np.array([np.log((1 + n) / (1 + df[t])) + 1 for t in terms])
    seen, keep = set(), []
    for j in base_idx:
        sig = tuple(sorted((t, c) for t, c in dc[j].items() if t in vocab))
        if sig and sig not in seen:
            seen.add(sig)
            keep.append(j)
    qidx = [j for j in qidx if any(t in vocab for t in dc[j])]
    print(f"textdata: base {len(keep)} (of {n}), queries {len(qidx)}, vocabulary {len(terms)}", file=sys.stderr)
    xb = tfidf([dc[j] for j in keep], vocab, idf)
    xq = tfidf([dc[j] for j in qidx], vocab, idf)
    v, s = rsvd(xb, dim, seed)
    eb = xb.matmul(v)
    eq = xq.matmul(v)
    eb /= np.linalg.norm(eb, axis=1, keepdims=True)
    eq /= np.linalg.norm(eq, axis=1, keepdims=True)
    eb32, eq32 = eb.astype(np.float32), eq.astype(np.float32)
    # Exact ground truth on the float32 vectors as written (what every engine sees).
    b64 = eb32.astype(np.float64)
    gt = np.empty((len(qidx), gtk), dtype=np.int64)
    for s0 in range(0, len(qidx), 100):
        sims = eq32[s0:s0 + 100].astype(np.float64) @ b64.T
        for r in range(sims.shape[0]):
            top = np.argpartition(-sims[r], gtk)[:gtk + 1]
            top = sorted(top.tolist(), key=lambda j: (-sims[r][j], j))[:gtk]
            gt[s0 + r] = top
    write_fvecs(os.path.join(out, "text-base.fvecs"), eb32)
    write_fvecs(os.path.join(out, "text-queries.fvecs"), eq32)
    write_ivecs(os.path.join(out, "text-gt.ivecs"), gt)
    for name, idx in (("text-base.tsv", keep), ("text-queries.tsv", qidx)):
        with open(os.path.join(out, name), "w", encoding="utf-8") as f:
            for i, j in enumerate(idx):
                f.write(f"{i}\t{docs[j]}\n")
    ev = (s ** 2) / (s ** 2).sum()
    with open(os.path.join(out, "text-manifest.txt"), "w") as f:
        f.write(f"source {os.path.basename(src)} sha256 {sha256(src)}\n")
        f.write(f"documents {len(docs)} base {len(keep)} queries {len(qidx)} vocabulary {len(terms)} dim {dim} seed {seed}\n")
        f.write(f"numpy {np.__version__}\n")
        f.write("singular-value energy share, first 8 / 32 / 64 dims: "
                f"{ev[:8].sum():.3f} / {ev[:32].sum():.3f} / {ev[:64].sum():.3f}\n")
        for name in ("text-base.fvecs", "text-queries.fvecs", "text-gt.ivecs"):
            f.write(f"{name} sha256 {sha256(os.path.join(out, name))}\n")
    print(open(os.path.join(out, "text-manifest.txt")).read(), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
