package query

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/parqdb/parqdb/postings"
	"github.com/parqdb/parqdb/storage"
	"github.com/parqdb/parqdb/vecfile"
)

// vecFileState is the snapshot's optional vectors file (package vecfile;
// profile §4.2), opened on first need: refine and the source encoding read
// their exact vectors from it, by postings position, when the vector store
// does not hold their list. Absent, they read the source as before.
type vecFileState struct {
	mu     sync.Mutex
	done   bool // looked for (absence and a valid file are remembered)
	f      *vecfile.File
	obj    storage.Object
	starts []int64    // global position of each list's first row
	blocks *vecBlocks // cached blocks of the file, under the process budget
}

// vectorsFile returns the snapshot's vectors file, or nil when it has none.
// The first call opens it (on S3 one HEAD, then one GET of the footer); a
// file that is present but truncated, damaged or written for other
// postings is an error naming it (wrapping ErrCorrupt), so that a damaged
// side file is seen rather than silently slowing searches; a failure to
// reach it is an error that the next call retries.
func (ix *Index) vectorsFile(ctx context.Context) (*vecFileState, error) {
	s := &ix.vfile
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		if s.f == nil {
			return nil, nil
		}
		return s, nil
	}
	if noVectorsFile {
		s.done = true
		return nil, nil
	}
	key := ix.VectorsFileLocation()
	o, err := ix.wh.Open(ctx, key)
	if errors.Is(err, storage.ErrNotExist) {
		s.done = true
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("index %q: vectors file: %w", ix.name, err)
	}
	f, err := vecfile.OpenFor(o, o.Size(), key, ix.Dim(), ix.manifest.Rows, ix.manifestHash)
	if err != nil {
		o.Close()
		if errors.Is(err, vecfile.ErrCorrupt) {
			return nil, fmt.Errorf("index %q: %w: %w (delete it to search without it, or run `parqdb index verify %s`)", ix.name, ErrCorrupt, err, ix.name)
		}
		return nil, fmt.Errorf("index %q: vectors file: %w", ix.name, err)
	}
	s.f, s.obj, s.starts, s.done = f, o, vecfile.Starts(ix.manifest), true
	s.blocks = newVecBlocks(ix.budget, ix.vstore.budget < 0)
	return s, nil
}

// noVectorsFile makes searches ignore vectors files (tests compare both
// ways on one index).
var noVectorsFile bool

// closeVectorsFile releases the vectors file, if open.
func (ix *Index) closeVectorsFile() error {
	s := &ix.vfile
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.obj == nil {
		return nil
	}
	err := s.obj.Close()
	s.blocks.close()
	s.obj, s.f, s.blocks = nil, nil, nil
	return err
}

// fileListVectors reads list l's exact vectors (row i at [i*w:(i+1)*w],
// zero padded) from the vectors file with one ranged read (counted in st,
// when not nil).
func (ix *Index) fileListVectors(vf *vecFileState, l *list, st *Stats) ([]float32, error) {
	dim, w := ix.Dim(), ix.vstore.w
	n := l.len()
	if got := vf.starts[l.cid+1] - vf.starts[l.cid]; got != int64(n) {
		return nil, fmt.Errorf("index %q: %w: list %d has %d rows, the manifest %d", ix.name, ErrCorrupt, l.cid, n, got)
	}
	raw := make([]float32, n*dim)
	if st != nil && n > 0 {
		st.VectorFileRequests++
		st.VectorFileBytes += int64(n) * int64(dim) * 4
	}
	if err := vf.f.ReadRows(raw, vf.starts[l.cid]); err != nil {
		return nil, fmt.Errorf("index %q: %w", ix.name, err)
	}
	if w == dim {
		return raw, nil
	}
	v := make([]float32, n*w)
	for i := range n {
		copy(v[i*w:i*w+dim], raw[i*dim:(i+1)*dim])
	}
	return v, nil
}

// fileCandVectors reads the exact vectors of cands (each in an index
// list) from the vectors file through its block cache (the missing
// blocks in one batch, adjacent blocks in one read; counted in st) and
// sets vs[at[j]] to cands[j]'s, zero padded to the store's stride.
func (ix *Index) fileCandVectors(ctx context.Context, vf *vecFileState, cands []cand, at []int, vs [][]float32, st *Stats) error {
	dim, w := ix.Dim(), ix.vstore.w
	pos := make([]int64, len(cands))
	for j, c := range cands {
		pos[j] = vf.starts[c.l.cid] + int64(c.l.storeRow(c.i))
	}
	read := make([]float32, len(cands)*w)
	err := vf.blocks.gather(ctx, vf.f, pos, func(j int, row []byte) {
		vecfile.Decode(read[j*w:j*w+dim], row)
	}, st)
	if err != nil {
		return fmt.Errorf("index %q: %w", ix.name, err)
	}
	for j := range cands {
		vs[at[j]] = read[j*w : (j+1)*w : (j+1)*w]
	}
	return nil
}

// prefetchFileVectors reads, in one parallel batch, the vectors-file
// blocks of every candidate whose list the store does not hold, into the
// block cache: refine's passes (the k best by code distance, then those
// the LVQ8 bound cannot rule out) then find them cached, and a search pays
// one round of reads rather than one per pass. It does nothing without a
// vectors file, with the block cache off, or when the store holds every
// list. Its reads are counted in st.
func (ix *Index) prefetchFileVectors(ctx context.Context, cands []cand, st *Stats) error {
	if ix.vstore.full.Load() || len(cands) == 0 {
		return nil
	}
	var pos []int64
	var vf *vecFileState
	var last *list
	stored := false
	for _, c := range cands {
		if c.l.cid < 0 {
			continue
		}
		if c.l != last {
			last, stored = c.l, ix.vstore.lookup(c.l.cid) != nil
		}
		if stored {
			continue
		}
		if vf == nil {
			var err error
			if vf, err = ix.vectorsFile(ctx); err != nil {
				return err
			}
			if vf == nil || vf.blocks.off {
				return nil
			}
		}
		pos = append(pos, vf.starts[c.l.cid]+int64(c.l.storeRow(c.i)))
	}
	if len(pos) == 0 {
		return nil
	}
	if err := vf.blocks.gather(ctx, vf.f, pos, nil, st); err != nil {
		return fmt.Errorf("index %q: %w", ix.name, err)
	}
	return nil
}

// vectorsFromFile reports whether searches with opts take every exact
// vector they need from the vectors file, so that they need no key → row
// map: the snapshot has a vectors file, the store will not be filled whole
// (a filled store is built through the map), and no filter (whose exact
// plan gathers vectors by source row) is set.
func (ix *Index) vectorsFromFile(ctx context.Context, opts Options) (bool, error) {
	s := ix.vstore
	if opts.Filter != nil || s.full.Load() || s.fits(ix.table.NumRows(), ix.NList(), ix.budget.Limit()) {
		return false, nil
	}
	vf, err := ix.vectorsFile(ctx)
	return vf != nil, err
}

// VectorsFileLocation returns the warehouse key at which the snapshot's
// vectors file is, or would be (profile §4.2).
func (ix *Index) VectorsFileLocation() string {
	return vecfile.Location(postings.SnapshotLayout(ix.snap).Meta)
}

// VectorsFileSize returns the size in bytes of the snapshot's vectors file
// (profile §4.2), opening it if no search has yet (on S3 a HEAD and a
// footer read; never a read of its vectors), and false when the snapshot
// has none. An error is what the open returned (a damaged file wraps
// ErrCorrupt).
func (ix *Index) VectorsFileSize(ctx context.Context) (int64, bool, error) {
	vf, err := ix.vectorsFile(ctx)
	if err != nil || vf == nil {
		return 0, false, err
	}
	return vf.obj.Size(), true, nil
}
