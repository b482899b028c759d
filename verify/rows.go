package verify

import (
	"context"
	"fmt"
	"hash/crc32"
	"hash/maphash"
	"math"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/parqdb/parqdb/internal/source"
	"github.com/parqdb/parqdb/ivf"
	"github.com/parqdb/parqdb/lvq"
	"github.com/parqdb/parqdb/postings"
)

// rowChecks are the checks of checkRows, in report order.
var rowChecks = []string{CheckFiles, CheckLayout, CheckRows, CheckSourceRows, CheckKeys, CheckLVQ, CheckAssignment}

// numShards splits the key map so that file readers insert concurrently.
const numShards = 64

// entry is what the join keeps of one postings row.
type entry struct {
	cid      int32
	file     int32
	rowGroup int32
	seen     uint32 // set atomically when the source row is found
	offset   float32
	scale    float32
	codeHash uint64
	pos      int64 // position in postings order (list by list in CID order)
}

type shard struct {
	mu   sync.Mutex
	idx  map[string]int32 // source-encoded key → index into ents
	ents []entry
}

// rowCheck is the streaming join of postings rows with source rows. The
// postings files are read (in parallel) into a map from the source-encoded
// key to the row's CID, LVQ offset and scale and a seeded 64-bit hash of its
// code; then the source is scanned once and every source row is looked up,
// re-encoded, re-assigned and compared. When the map would exceed
// Options.MemoryLimit the key space is split by hash into partitions that
// are joined one after the other.
type rowCheck struct {
	r      *runner
	man    *postings.Manifest
	schema postings.Schema // the manifest's: how the files are read
	join   bool            // the source can be joined
	lvq    int             // 0 (source), 4 or 8
	parts  uint64
	seed   maphash.Seed
	shards [numShards]shard

	files, layout, rows, srcRows, keys, codes, assign *problems
	unreadable                                        atomic.Int64 // files whose rows could not all be read

	postRows, rowGroups, srcRowsN atomic.Int64
	refRows, fastRows             atomic.Int64
	joined                        atomic.Int64 // source rows matched with their posting
	refEvery                      uint64
	assigner                      *ivf.Assigner
	scanStopped                   bool
	srcKeys                       []string // source file keys, by file index
	// rgPos is the postings-order position of each row group's first row,
	// by (file, row group), for the vectors file check.
	rgPos map[[2]int32]int64
}

func (r *runner) checkRows(ctx context.Context) error {
	for _, c := range rowChecks[:1] {
		r.begin(c)
	}
	if r.man == nil {
		for _, c := range rowChecks {
			r.skip(c, "no valid manifest")
		}
		return nil
	}
	rc := &rowCheck{
		r: r, man: r.man, schema: r.man.Schema(), join: r.sourceOK && r.layout != nil,
		seed:  maphash.MakeSeed(),
		files: r.newProblems(), layout: r.newProblems(), rows: r.newProblems(), srcRows: r.newProblems(),
		keys: r.newProblems(), codes: r.newProblems(), assign: r.newProblems(),
	}
	switch r.man.Encoding {
	case postings.EncodingLVQ4:
		rc.lvq = 4
	case postings.EncodingLVQ8:
		rc.lvq = 8
	}
	rc.parts = rc.partitions()
	rc.rgPos = rowGroupPositions(r.man)
	if rc.join {
		for _, f := range r.table.Files() {
			rc.srcKeys = append(rc.srcKeys, f.Key)
		}
	}
	if r.cent != nil {
		rc.assigner = ivf.NewAssigner(r.cent)
		work := float64(r.man.Rows) * float64(r.cent.NList) * float64(r.cent.Dim)
		rc.refEvery = 1
		if !r.opts.Exhaustive && work > float64(r.opts.ReferenceBudget) {
			rc.refEvery = uint64(math.Ceil(work / float64(r.opts.ReferenceBudget)))
		}
	}
	for part := uint64(0); part < rc.parts; part++ {
		if part == 0 {
			for _, c := range rowChecks[1:3] {
				r.begin(c)
			}
		}
		if err := rc.readFiles(ctx, part); err != nil {
			return err
		}
		if u := rc.unreadable.Load(); part == 0 && u > 0 && rc.join {
			rc.keys.add("%d unreadable postings file(s) (see %s): their source rows have no posting that could be read", u, CheckFiles)
		}
		if !rc.join {
			break
		}
		if part == 0 {
			for _, c := range rowChecks[3:] {
				r.begin(c)
			}
		}
		if err := rc.scanSource(ctx, part); err != nil {
			return err
		}
		if rc.scanStopped {
			break
		}
		rc.sweep()
	}
	return rc.report(ctx)
}

// partitions is how many key-space partitions keep the key map under
// Options.MemoryLimit: about 100 bytes of map, entry and string overhead
// per row plus the key, whose mean length is estimated from the manifest's
// byte ranges.
func (rc *rowCheck) partitions() uint64 {
	m := rc.man
	var total int64
	for _, rg := range m.RowGroups {
		total += rg.Length
	}
	fixed := int64(4)
	if rc.lvq != 0 {
		fixed += 12 + int64(rc.schema.CodeLen())
	}
	keyLen := max(8, (total-m.Rows*fixed)/max(1, m.Rows))
	need := float64(m.Rows) * float64(100+keyLen)
	return uint64(max(1, math.Ceil(need/float64(rc.r.opts.MemoryLimit))))
}

func (rc *rowCheck) readFiles(ctx context.Context, part uint64) error {
	for i := range rc.shards {
		rc.shards[i].idx = map[string]int32{}
		rc.shards[i].ents = nil
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(rc.r.opts.Workers)
	for i := range rc.man.Files {
		g.Go(func() error { return rc.readFile(gctx, i, part) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return ctx.Err()
}

// readFile checks postings file i (in partition 0 only: size, VerifyFile,
// row-group layout, row counts) and adds its rows of partition part to the
// key map.
func (rc *rowCheck) readFile(ctx context.Context, i int, part uint64) error {
	first := part == 0
	fe := rc.man.Files[i]
	obj, err := rc.r.env.Warehouse.Open(ctx, fe.Path)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if first {
			rc.files.add("open %s: %v", fe.Path, err)
			rc.unreadable.Add(1)
		}
		return nil
	}
	defer obj.Close()
	if first {
		if obj.Size() != fe.Size {
			rc.files.add("%s: %d bytes, the manifest says %d", fe.Path, obj.Size(), fe.Size)
		} else if err := postings.VerifyFile(obj, obj.Size(), rc.man, i); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if strings.Contains(err.Error(), fe.Path) {
				rc.files.add("%v", err)
			} else {
				rc.files.add("%s: %v", fe.Path, err)
			}
		}
	}
	lo, hi := int32(-1), int32(-1)
	if offs := rc.r.offsets; offs != nil && int(fe.Bucket)+1 < len(offs) {
		lo, hi = offs[fe.Bucket], offs[fe.Bucket+1]
	}
	var (
		n      int64
		lastRG = -1
		rgCID  int32
		kbuf   []byte
		curRG  = -1
		rgRow  int64
	)
	_, err = postings.ReadFile(obj, obj.Size(), rc.schema, func(g int, row postings.Row) error {
		if g != curRG {
			curRG, rgRow = g, 0
		}
		pos := rc.rgPos[[2]int32{int32(i), int32(g)}] + rgRow
		rgRow++
		if first {
			n++
			if g != lastRG {
				lastRG, rgCID = g, row.CID
				if lo >= 0 && (row.CID < lo || row.CID >= hi) {
					rc.layout.add("%s row group %d: cid %d outside root bucket %d's interval [%d, %d)", fe.Path, g, row.CID, fe.Bucket, lo, hi)
				}
			} else if row.CID != rgCID {
				rc.layout.add("%s row group %d holds cids %d and %d", fe.Path, g, rgCID, row.CID)
			}
		}
		if rc.join {
			var err error
			kbuf, err = rc.sourceKey(kbuf[:0], row.Key)
			if err != nil {
				if first {
					rc.keys.add("%s row group %d: key: %v", fe.Path, g, err)
				}
				return nil
			}
			rc.insert(part, kbuf, row, int32(i), int32(g), pos)
		}
		return ctx.Err()
	})
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if first {
			rc.layout.add("%s: footer read: %v", fe.Path, err)
			rc.unreadable.Add(1)
		}
		return nil
	}
	if first {
		if n != fe.Rows {
			rc.rows.add("%s: %d rows, the manifest says %d", fe.Path, n, fe.Rows)
		}
		rc.postRows.Add(n)
		rc.rowGroups.Add(int64(lastRG + 1))
	}
	return nil
}

// sourceKey converts a postings key (postings.Schema.AppendKey encoding)
// into the source's key encoding (source.AppendKey) through the key
// values, so that the join does not depend on the two encodings agreeing.
func (rc *rowCheck) sourceKey(dst, key []byte) ([]byte, error) {
	vals, err := rc.schema.DecodeKey(key)
	if err != nil {
		return dst, err
	}
	kv := make([]source.KeyValue, len(vals))
	for i, v := range vals {
		if kv[i], err = source.KeyValueOf(rc.r.layout.Keys[i], v); err != nil {
			return dst, fmt.Errorf("key_%d: %w", i+1, err)
		}
	}
	return source.AppendKey(dst, kv), nil
}

// fmtKey formats a source-encoded key for messages.
func (rc *rowCheck) fmtKey(key []byte) string {
	vals, err := source.DecodeKey(rc.r.layout.Keys, key)
	if err != nil {
		return fmt.Sprintf("%x", key)
	}
	return source.FormatKey(rc.r.layout.Keys, vals)
}

func (rc *rowCheck) where(e *entry) string {
	return fmt.Sprintf("%s row group %d", rc.man.Files[e.file].Path, e.rowGroup)
}

func (rc *rowCheck) insert(part uint64, key []byte, row postings.Row, file, rg int32, pos int64) {
	h := maphash.Bytes(rc.seed, key)
	if h%rc.parts != part {
		return
	}
	e := entry{cid: row.CID, file: file, rowGroup: rg, offset: row.Offset, scale: row.Scale, pos: pos}
	if rc.lvq != 0 {
		e.codeHash = maphash.Bytes(rc.seed, row.Code)
	}
	sh := &rc.shards[h>>58]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if j, dup := sh.idx[string(key)]; dup {
		rc.keys.add("key (%s) occurs twice in the postings: %s and %s row group %d", rc.fmtKey(key), rc.where(&sh.ents[j]), rc.man.Files[file].Path, rg)
		return
	}
	sh.idx[string(key)] = int32(len(sh.ents))
	sh.ents = append(sh.ents, e)
}

// job is a copy of one source batch for the row workers.
type job struct {
	file     int
	firstRow int64
	n, dim   int
	vecs     []float32
	keys     []byte
	ends     []int
}

func (j *job) key(i int) []byte {
	s := 0
	if i > 0 {
		s = j.ends[i-1]
	}
	return j.keys[s:j.ends[i]]
}

func (rc *rowCheck) scanSource(ctx context.Context, part uint64) error {
	w := rc.r.opts.Workers
	jobs := make(chan *job, w)
	free := make(chan *job, 2*w+1)
	for range cap(free) {
		free <- &job{}
	}
	g, gctx := errgroup.WithContext(ctx)
	for range w {
		g.Go(func() error {
			wk := rc.newWorker()
			for j := range jobs {
				for i := range j.n {
					if err := gctx.Err(); err != nil {
						return err
					}
					wk.row(part, j, i)
				}
				free <- j
			}
			return nil
		})
	}
	l := rc.r.layout
	scanErr := rc.r.table.ScanWith(gctx, l, source.ScanOptions{Workers: min(w, 2)}, func(b *source.Batch) error {
		var j *job
		select {
		case j = <-free:
		case <-gctx.Done():
			return gctx.Err()
		}
		j.file, j.firstRow, j.n, j.dim = b.File, b.FirstRow, b.N, b.Dim
		j.vecs = append(j.vecs[:0], b.Vectors[:b.N*b.Dim]...)
		j.keys, j.ends = j.keys[:0], j.ends[:0]
		for i := range b.N {
			j.keys = b.AppendKey(j.keys, i)
			j.ends = append(j.ends, len(j.keys))
		}
		if part == 0 {
			rc.srcRowsN.Add(int64(b.N))
		}
		select {
		case jobs <- j:
			return nil
		case <-gctx.Done():
			return gctx.Err()
		}
	})
	close(jobs)
	werr := g.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	if werr != nil {
		return werr
	}
	if scanErr != nil {
		rc.srcRows.add("%v", scanErr)
		rc.scanStopped = true
	}
	return nil
}

// worker holds one goroutine's scratch buffers.
type worker struct {
	rc   *rowCheck
	code []byte
	vbuf []byte // scratch of the vectors file check
}

func (rc *rowCheck) newWorker() *worker {
	return &worker{rc: rc, code: make([]byte, rc.schema.CodeLen())}
}

// row checks source row i of j against its posting.
func (wk *worker) row(part uint64, j *job, i int) {
	rc := wk.rc
	key := j.key(i)
	h := maphash.Bytes(rc.seed, key)
	if h%rc.parts != part {
		return
	}
	srcFile := rc.srcKeys[j.file]
	sh := &rc.shards[h>>58]
	idx, ok := sh.idx[string(key)]
	if !ok {
		rc.keys.add("source row %d of %s (%s) has no posting", j.firstRow+int64(i), srcFile, rc.fmtKey(key))
		return
	}
	e := &sh.ents[idx]
	if !atomic.CompareAndSwapUint32(&e.seen, 0, 1) {
		rc.keys.add("source key (%s) occurs in more than one source row (again at row %d of %s)", rc.fmtKey(key), j.firstRow+int64(i), srcFile)
		return
	}
	rc.joined.Add(1)
	x := j.vecs[i*j.dim : (i+1)*j.dim]
	if vf := rc.r.vf; vf != nil {
		vf.addSource(wk, e.pos, x)
	}
	if rc.lvq != 0 {
		var off, sc float32
		if rc.lvq == 8 {
			off, sc = lvq.Encode8(wk.code, x)
		} else {
			off, sc = lvq.Encode4(wk.code, x)
		}
		// offset compares numerically: the sign of a zero minimum is not
		// significant (clarification 3).
		if off != e.offset || math.Float32bits(sc) != math.Float32bits(e.scale) || maphash.Bytes(rc.seed, wk.code) != e.codeHash {
			what := "code"
			switch {
			case off != e.offset:
				what = fmt.Sprintf("offset %v, recomputed %v", e.offset, off)
			case math.Float32bits(sc) != math.Float32bits(e.scale):
				what = fmt.Sprintf("scale %v, recomputed %v", e.scale, sc)
			}
			rc.codes.add("key (%s) in %s: stored %s differs from lvq%d of the source vector", rc.fmtKey(key), rc.where(e), what, rc.lvq)
		}
	}
	if rc.assigner == nil {
		return
	}
	var want int32
	if rc.refEvery == 1 || uint64(crc32.Checksum(key, castagnoli))%rc.refEvery == 0 {
		want = ivf.ExactNearest(rc.r.cent, x)
		rc.refRows.Add(1)
	} else {
		want = rc.assigner.Assign(x)
		rc.fastRows.Add(1)
		if want != e.cid {
			// Never report a misassignment on the fast path's word alone.
			ref := ivf.ExactNearest(rc.r.cent, x)
			rc.refRows.Add(1)
			if ref != want {
				rc.assign.add("key (%s): ivf.Assigner gives cid %d, the brute-force reference %d (a bug in package ivf)", rc.fmtKey(key), want, ref)
			}
			want = ref
		}
	}
	if want != e.cid {
		rc.assign.add("key (%s) is in cid %d (%s), its exact nearest centroid is cid %d", rc.fmtKey(key), e.cid, rc.where(e), want)
	}
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// sweep reports the postings whose key no source row had.
func (rc *rowCheck) sweep() {
	for s := range rc.shards {
		sh := &rc.shards[s]
		for k, i := range sh.idx {
			if e := &sh.ents[i]; e.seen == 0 {
				rc.keys.add("posting key (%s) in %s has no source row", rc.fmtKey([]byte(k)), rc.where(e))
			}
		}
		sh.idx, sh.ents = nil, nil
	}
}

// report records the row checks.
func (rc *rowCheck) report(ctx context.Context) error {
	r, m := rc.r, rc.man
	spanning := 0
	for i := 0; i < len(m.RowGroups); {
		j := i
		files := 0
		for ; j < len(m.RowGroups) && m.RowGroups[j].CID == m.RowGroups[i].CID; j++ {
			if j == i || m.RowGroups[j].File != m.RowGroups[j-1].File {
				files++
			}
		}
		if files > 1 {
			spanning++
		}
		i = j
	}
	r.finish(CheckFiles, rc.files, "%d files match the manifest: sizes, footers, byte ranges, CRC-32C, range decode", len(m.Files))
	r.finish(CheckLayout, rc.layout, "%d row groups, one CID each, inside their files' root buckets; %d CIDs span several files", rc.rowGroups.Load(), spanning)

	n := rc.postRows.Load()
	if rc.files.count() == 0 && rc.layout.count() == 0 {
		if n != m.Rows || n != r.snap.IndexedRows {
			rc.rows.add("the files hold %d rows, the manifest says %d, indexed-rows is %d", n, m.Rows, r.snap.IndexedRows)
		}
	} else if rc.rows.count() == 0 {
		rc.rows.add("not all rows readable (see %s, %s): %d rows read, %d expected", CheckFiles, CheckLayout, n, r.snap.IndexedRows)
	}
	if rc.join && !rc.scanStopped && rc.srcRowsN.Load() != n {
		rc.rows.add("the postings hold %d rows, the source %d", n, rc.srcRowsN.Load())
	}
	r.finish(CheckRows, rc.rows, "%d rows in %d files = ntotal", n, len(m.Files))

	if !rc.join {
		why := "the source is not usable (see " + CheckSource + ")"
		for _, c := range rowChecks[3:] {
			r.skip(c, why)
		}
		return nil
	}
	sn := rc.srcRowsN.Load()
	if !rc.scanStopped && sn != r.snap.IndexedRows {
		rc.srcRows.add("%d source rows scanned, indexed-rows is %d", sn, r.snap.IndexedRows)
	}
	r.finish(CheckSourceRows, rc.srcRows, "%d rows scanned, each a finite %d-dimensional vector with a non-null key", sn, m.Dim)
	if rc.scanStopped {
		for _, c := range rowChecks[4:] {
			r.skip(c, "the source scan stopped (see "+CheckSourceRows+")")
		}
		return nil
	}
	krNote, err := r.checkKeyRows(ctx, rc.keys)
	if err != nil {
		return err
	}
	r.finish(CheckKeys, rc.keys, "%d keys unique, each resolves to exactly one source row (%d key-space partition(s))%s", n, rc.parts, krNote)
	if rc.lvq == 0 {
		r.skip(CheckLVQ, "posting encoding source stores no codes")
	} else {
		r.finish(CheckLVQ, rc.codes, "%d rows: offset, scale and lvq%d code equal the encoding of the source vector", rc.joined.Load(), rc.lvq)
	}
	if rc.assigner == nil {
		r.skip(CheckAssignment, "the centroids are invalid (see "+CheckCentroids+")")
		return nil
	}
	mode := "every row decided by the brute-force reference ivf.ExactNearest"
	if rc.refEvery > 1 {
		mode = fmt.Sprintf("%d rows by the exact pruned ivf.Assigner, %d (a 1/%d sample and every disagreement) also by the brute-force reference ivf.ExactNearest",
			rc.fastRows.Load(), rc.refRows.Load(), rc.refEvery)
	}
	r.finish(CheckAssignment, rc.assign, "%d rows in their exact nearest centroid: %s", rc.joined.Load(), mode)
	return nil
}
