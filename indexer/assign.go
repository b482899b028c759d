package indexer

import (
	"bufio"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"

	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/semaphore"

	"github.com/parqdb/parqdb/internal/source"
	"github.com/parqdb/parqdb/ivf"
	"github.com/parqdb/parqdb/lvq"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/postings"
	"github.com/parqdb/parqdb/storage"
)

// postingsSchema is the postings schema of this build.
func (b *builder) postingsSchema() (postings.Schema, error) {
	s := postings.Schema{Encoding: b.opts.Encoding, Dim: b.layout.Dim}
	for _, k := range b.layout.Keys {
		kt, err := postings.ParseKeyType(k.TypeName())
		if err != nil {
			return s, fmt.Errorf("key field %q: %w", k.Name, err)
		}
		kt.Name = k.Name
		s.Keys = append(s.Keys, kt)
	}
	return s, nil
}

// assign streams the source a second time: every row is assigned to its
// exact nearest leaf, encoded, and spilled to a temporary file of its root
// bucket. Peak memory is bounded by one chunk of rows, not by N.
func (b *builder) assign(ctx context.Context) error {
	schema, err := b.postingsSchema()
	if err != nil {
		return err
	}
	b.schema = schema
	c := b.art.Centroids
	sp, err := newSpill(b.opts.TempDir, c.NumRoots())
	if err != nil {
		return err
	}
	b.spill = sp
	// The vectors file (Options.VectorsFile) needs every row's exact
	// vector in postings order: spilled beside the codes, by root bucket.
	var vsp *spill
	if b.opts.VectorsFile {
		if vsp, err = newSpill(b.opts.TempDir, c.NumRoots()); err != nil {
			return err
		}
		b.vspill = vsp
	}

	p := b.opts.Progress
	p.Start(StageAssign, scan0(b).NumRows())
	scan, layout := scan0(b), b.layout
	if b.scanLayout != nil {
		layout = b.scanLayout
	}
	asg := ivf.NewAssigner(c)

	// Three stages overlap: the scan fills the next chunk while the
	// current one is assigned and encoded and the previous one spilled.
	// Chunks travel through the stages in source order, so the spill
	// (and every file written from it) does not depend on the timing.
	const chunks = 3
	free := make(chan *chunk, chunks)
	for range chunks {
		free <- newChunk(DefaultChunkRows, layout.Dim, schema.CodeLen())
	}
	filled := make(chan *chunk, 1)
	assigned := make(chan *chunk, 1)
	g, gctx := errgroup.WithContext(ctx)
	send := func(to chan<- *chunk, ch *chunk) error {
		select {
		case to <- ch:
			return nil
		case <-gctx.Done():
			return gctx.Err()
		}
	}
	g.Go(func() error { // scan
		defer close(filled)
		var ch *chunk
		take := func() error {
			select {
			case ch = <-free:
				return nil
			case <-gctx.Done():
				return gctx.Err()
			}
		}
		if err := take(); err != nil {
			return err
		}
		err := scan.Scan(gctx, layout, 0, func(batch *source.Batch) error {
			for i := 0; i < batch.N; i++ {
				// source and postings share the key encoding (keyenc).
				ch.keys = batch.AppendKey(ch.keys, i)
				ch.keyEnds = append(ch.keyEnds, len(ch.keys))
				ch.vecs = append(ch.vecs, batch.Vector(i)...)
				ch.n++
				if ch.n == ch.max {
					if err := send(filled, ch); err != nil {
						return err
					}
					if err := take(); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		if ch.n > 0 {
			return send(filled, ch)
		}
		return nil
	})
	g.Go(func() error { // assign + encode
		defer close(assigned)
		for ch := range filled {
			if err := ch.assignEncode(gctx, asg, b.opts.Encoding, b.opts.Workers); err != nil {
				return err
			}
			if err := send(assigned, ch); err != nil {
				return err
			}
		}
		return nil
	})
	g.Go(func() error { // spill
		for ch := range assigned {
			for i := 0; i < ch.n; i++ {
				if err := sp.add(c.RootOf(ch.cids[i]), ch.record(i)); err != nil {
					return err
				}
				if vsp != nil {
					if err := vsp.add(c.RootOf(ch.cids[i]), ch.vecRecord(i)); err != nil {
						return err
					}
				}
			}
			p.Add(int64(ch.n))
			ch.reset()
			free <- ch
		}
		return nil
	})
	if err := g.Wait(); err != nil {
		return err
	}
	if vsp != nil {
		if err := vsp.finish(); err != nil {
			return err
		}
	}
	return sp.finish()
}

// chunk is a run of source rows assigned and encoded as one parallel unit.
type chunk struct {
	max, n, dim, codeLen int
	vecs                 []float32
	keys                 []byte
	keyEnds              []int
	cids                 []int32
	offsets, scales      []float32
	codes                []byte
	rec                  []byte
}

func newChunk(rows, dim, codeLen int) *chunk {
	return &chunk{
		max: rows, dim: dim, codeLen: codeLen,
		vecs:    make([]float32, 0, rows*dim),
		keyEnds: make([]int, 0, rows),
		cids:    make([]int32, rows),
		offsets: make([]float32, rows),
		scales:  make([]float32, rows),
		codes:   make([]byte, rows*codeLen),
	}
}

func (c *chunk) reset() {
	c.n = 0
	c.vecs = c.vecs[:0]
	c.keys = c.keys[:0]
	c.keyEnds = c.keyEnds[:0]
}

func (c *chunk) key(i int) []byte {
	start := 0
	if i > 0 {
		start = c.keyEnds[i-1]
	}
	return c.keys[start:c.keyEnds[i]]
}

// assignEncode assigns every row to its exact nearest leaf and encodes it,
// on up to workers goroutines; the result does not depend on workers.
func (c *chunk) assignEncode(ctx context.Context, a *ivf.Assigner, encoding string, workers int) error {
	if err := a.AssignParallel(ctx, c.vecs, c.cids[:c.n], workers); err != nil {
		return err
	}
	if encoding == metadata.EncodingSource {
		return nil
	}
	g, _ := errgroup.WithContext(ctx)
	per := (c.n + workers - 1) / workers
	for lo := 0; lo < c.n; lo += per {
		hi := min(lo+per, c.n)
		g.Go(func() error {
			for i := lo; i < hi; i++ {
				x := c.vecs[i*c.dim : (i+1)*c.dim]
				code := c.codes[i*c.codeLen : (i+1)*c.codeLen]
				if encoding == metadata.EncodingLVQ8 {
					c.offsets[i], c.scales[i] = lvq.Encode8(code, x)
				} else {
					c.offsets[i], c.scales[i] = lvq.Encode4(code, x)
				}
			}
			return nil
		})
	}
	return g.Wait()
}

// record serialises row i for the spill: cid, key length, key, offset,
// scale, code.
func (c *chunk) record(i int) []byte {
	key := c.key(i)
	r := c.rec[:0]
	r = binary.LittleEndian.AppendUint32(r, uint32(c.cids[i]))
	r = binary.AppendUvarint(r, uint64(len(key)))
	r = append(r, key...)
	if c.codeLen > 0 {
		r = binary.LittleEndian.AppendUint32(r, math.Float32bits(c.offsets[i]))
		r = binary.LittleEndian.AppendUint32(r, math.Float32bits(c.scales[i]))
		r = append(r, c.codes[i*c.codeLen:(i+1)*c.codeLen]...)
	}
	c.rec = r
	return r
}

// vecRecord serialises row i's exact vector for the vectors spill: cid,
// then the dim float32 values, little-endian.
func (c *chunk) vecRecord(i int) []byte {
	r := binary.LittleEndian.AppendUint32(c.rec[:0], uint32(c.cids[i]))
	for _, v := range c.vecs[i*c.dim : (i+1)*c.dim] {
		r = binary.LittleEndian.AppendUint32(r, math.Float32bits(v))
	}
	c.rec = r
	return r
}

// spill holds one temporary file per root bucket.
type spill struct {
	dir   *spillDir
	files []*os.File
	bufs  []*bufio.Writer
	rows  []int64
	bytes []int64
}

func newSpill(tmp string, buckets int) (*spill, error) {
	dir, err := newSpillDir(tmp, "build-")
	if err != nil {
		return nil, fmt.Errorf("spill folder: %w", err)
	}
	return &spill{dir: dir, files: make([]*os.File, buckets), bufs: make([]*bufio.Writer, buckets), rows: make([]int64, buckets), bytes: make([]int64, buckets)}, nil
}

func (s *spill) add(bucket int32, rec []byte) error {
	if s.files[bucket] == nil {
		f, err := os.CreateTemp(s.dir.path, fmt.Sprintf("bucket-%06d-*", bucket))
		if err != nil {
			return fmt.Errorf("spill: %w", err)
		}
		s.files[bucket], s.bufs[bucket] = f, bufio.NewWriterSize(f, 64<<10)
	}
	s.rows[bucket]++
	s.bytes[bucket] += int64(len(rec))
	if _, err := s.bufs[bucket].Write(rec); err != nil {
		return fmt.Errorf("spill %s: %w", s.files[bucket].Name(), err)
	}
	return nil
}

func (s *spill) finish() error {
	for i, w := range s.bufs {
		if w != nil {
			if err := w.Flush(); err != nil {
				return fmt.Errorf("spill %s: %w", s.files[i].Name(), err)
			}
		}
	}
	return nil
}

// read returns the spilled records of bucket, decoded, sorted by CID and
// otherwise in source order.
func (s *spill) read(bucket int, codeLen int) ([]postings.Row, error) {
	f := s.files[bucket]
	if f == nil {
		return nil, nil
	}
	data, err := os.ReadFile(f.Name())
	if err != nil {
		return nil, fmt.Errorf("spill: %w", err)
	}
	rows := make([]postings.Row, 0, s.rows[bucket])
	for len(data) > 0 {
		var r postings.Row
		if len(data) < 4 {
			return nil, io.ErrUnexpectedEOF
		}
		r.CID = int32(binary.LittleEndian.Uint32(data))
		data = data[4:]
		kl, n := binary.Uvarint(data)
		if n <= 0 || uint64(len(data)-n) < kl {
			return nil, fmt.Errorf("spill %s: corrupt record", f.Name())
		}
		r.Key = data[n : n+int(kl)]
		data = data[n+int(kl):]
		if codeLen > 0 {
			if len(data) < 8+codeLen {
				return nil, fmt.Errorf("spill %s: corrupt record", f.Name())
			}
			r.Offset = math.Float32frombits(binary.LittleEndian.Uint32(data))
			r.Scale = math.Float32frombits(binary.LittleEndian.Uint32(data[4:]))
			r.Code = data[8 : 8+codeLen]
			data = data[8+codeLen:]
		}
		rows = append(rows, r)
	}
	slices.SortStableFunc(rows, func(a, b postings.Row) int { return cmp.Compare(a.CID, b.CID) })
	return rows, nil
}

// writeMemBudget bounds the memory of the root buckets loaded at once by
// the write stage (docs/build.md, "Memory").
const writeMemBudget = 512 << 20

// memory estimates the bytes bucket takes once loaded by read: the records
// plus one postings.Row header per row. A nil spill (optimize reads the
// base's postings instead) estimates 0.
func (s *spill) memory(bucket int) int64 {
	if s == nil {
		return 0
	}
	return s.bytes[bucket] + 64*s.rows[bucket]
}

func (s *spill) remove() {
	for _, f := range s.files {
		if f != nil {
			f.Close()
		}
	}
	s.dir.remove()
}

// writePostings sorts each spilled bucket by CID and writes it as postings
// files (buckets in parallel), then the manifest. Peak memory is bounded by
// the largest buckets being written.
func (b *builder) writePostings(ctx context.Context) error {
	schema, sp := b.schema, b.spill
	p := b.opts.Progress
	c := b.art.Centroids
	p.Start(StageWrite, int64(c.NumRoots()))
	perBucket := make([][]postings.FileEntry, c.NumRoots())
	keys := make([][]string, c.NumRoots())
	sizes := make([]int64, c.NumRoots())
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(b.opts.Workers)
	// Buckets load whole (their rows sorted by CID in memory); the
	// semaphore keeps the loaded ones under writeMemBudget together, so
	// memory does not grow with Workers × the largest buckets. A bucket
	// larger than the budget is written alone.
	sem := semaphore.NewWeighted(writeMemBudget)
	for r := range perBucket {
		g.Go(func() error {
			cost := min(sp.memory(r), writeMemBudget)
			if err := sem.Acquire(gctx, cost); err != nil {
				return err
			}
			defer sem.Release(cost)
			rows, err := b.bucketRows(gctx, sp, r, schema.CodeLen())
			if err != nil {
				return err
			}
			files, ks, n, err := b.writeBucket(gctx, schema, int32(r), rows)
			perBucket[r], keys[r], sizes[r] = files, ks, n
			p.Add(1)
			return err
		})
	}
	err := g.Wait()
	for r := range keys {
		b.written = append(b.written, keys[r]...)
		b.bytes += sizes[r]
	}
	if err != nil {
		return err
	}
	files := slices.Clone(b.baseFiles)
	for _, fs := range perBucket {
		files = append(files, fs...)
	}
	m, err := postings.NewManifest(schema, int32(b.nlist), files)
	if err != nil {
		return fmt.Errorf("postings manifest: %w", err)
	}
	// Only a build that scanned the whole source in this run knows every
	// row's ordinal: an incremental refresh or optimize writes a version-1
	// manifest, whose readers build the key map from the source.
	if b.keySpill != nil && b.scanTable == nil && b.readBucket == nil && b.keepSourceFiles == nil {
		e, err := b.writeKeyRows(ctx)
		if err != nil {
			return err
		}
		if m, err = m.WithKeyRows(e); err != nil {
			return fmt.Errorf("postings manifest: %w", err)
		}
	}
	data, err := m.Marshal()
	if err != nil {
		return err
	}
	b.manifestRaw = data
	sf := b.keepSourceFiles
	if sf == nil {
		if sf, err = sourceFilesOf(b.table).Marshal(); err != nil {
			return err
		}
	}
	if err := b.writeObject(ctx, b.metaLoc+postings.SourceFilesName, sf); err != nil {
		return err
	}
	mkey := b.metaLoc + postings.ManifestName
	if err := b.writeObject(ctx, mkey, data); err != nil {
		return err
	}
	b.manifest = m
	return nil
}

// bucketRows returns the rows of root bucket r sorted by CID: from the
// spill, or for optimize from the base postings.
func (b *builder) bucketRows(ctx context.Context, sp *spill, r, codeLen int) ([]postings.Row, error) {
	if b.readBucket != nil {
		return b.readBucket(ctx, r)
	}
	return sp.read(r, codeLen)
}

// writeBucket writes the rows of one root bucket (sorted by CID) into as
// many postings files as the row-group limit requires.
func (b *builder) writeBucket(ctx context.Context, schema postings.Schema, bucket int32, rows []postings.Row) (files []postings.FileEntry, keys []string, bytes int64, err error) {
	for seq := 0; len(rows) > 0; seq++ {
		key := b.postingsLoc + postings.BucketFileName(bucket, seq)
		var fe postings.FileEntry
		n, err := storage.WriteWith(ctx, b.env.Warehouse, key, func(w io.Writer) error {
			bw, err := postings.NewBucketWriter(w, schema, bucket, postings.WriterOptions{})
			if err != nil {
				return err
			}
			for len(rows) > 0 {
				j := 1
				for j < len(rows) && rows[j].CID == rows[0].CID {
					j++
				}
				if err := bw.WriteCID(rows[0].CID, rows[:j]); errors.Is(err, postings.ErrFileFull) {
					break // the rest goes to the bucket's next file
				} else if err != nil {
					return err
				}
				rows = rows[j:]
			}
			fe, err = bw.Close()
			return err
		})
		if err != nil {
			return files, keys, bytes, err
		}
		fe.Path = key
		files = append(files, fe)
		keys = append(keys, key)
		bytes += n
	}
	return files, keys, bytes, nil
}

// scan0 is the table assign reads: the whole source, or for an
// incremental refresh only its new files.
func scan0(b *builder) *source.Table {
	if b.scanTable != nil {
		return b.scanTable
	}
	return b.table
}
