package main

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"

	"github.com/parquet-go/parquet-go"

	"github.com/parqdb/parqdb/internal/fvecs"
)

// mixture is a deterministic Gaussian mixture closer to real embeddings
// than synth: component weights follow a Zipf-like law (the largest cluster
// holds ~100× the rows of the smallest), each component has its own spread,
// and the centres themselves sit in a few coarse groups, so lists differ in
// size and neighbouring clusters overlap. Rows stream to disk; memory is the
// centres (k·d floats) plus one row group, whatever n.
type mixture struct {
	n           int64
	d, k, files int
	q           int
	seed        uint64
	fvecs       bool
	normalize   bool // scale every row (base and queries) to unit length, for --metric cosine

	centers []float32 // k·d
	spread  []float32 // per component
	cum     []float64 // cumulative weights, cum[k-1] == 1
}

func (m *mixture) init() error {
	if m.n < 1 || m.d < 1 || m.k < 1 || m.files < 1 || m.q < 0 {
		return errors.New("mixture: -n, -d, -clusters and -files must be ≥ 1, -queries ≥ 0")
	}
	if int64(m.files) > m.n {
		m.files = int(m.n)
	}
	rng := rand.New(rand.NewPCG(m.seed, 0x5bd1e995))
	groups := max(1, m.k/100)
	gc := make([]float32, groups*m.d)
	for i := range gc {
		gc[i] = float32(2 * rng.NormFloat64())
	}
	m.centers = make([]float32, m.k*m.d)
	m.spread = make([]float32, m.k)
	w := make([]float64, m.k)
	for c := 0; c < m.k; c++ {
		g := rng.IntN(groups)
		for j := 0; j < m.d; j++ {
			m.centers[c*m.d+j] = gc[g*m.d+j] + float32(rng.NormFloat64())
		}
		// spreads between 0.2 and 0.6 per coordinate
		m.spread[c] = float32(0.2 + 0.4*rng.Float64())
		// Zipf-like weight 1/(r+10): rank order shuffled by the centre draw.
		w[c] = 1 / float64(c+10)
	}
	rng.Shuffle(len(w), func(i, j int) { w[i], w[j] = w[j], w[i] })
	m.cum = make([]float64, m.k)
	var s float64
	for c, x := range w {
		s += x
		m.cum[c] = s
	}
	for c := range m.cum {
		m.cum[c] /= s
	}
	m.cum[m.k-1] = 1
	return nil
}

// row draws row id from rng into v (len d) and returns its component.
func (m *mixture) row(rng *rand.Rand, v []float32) int {
	c := sort.SearchFloat64s(m.cum, rng.Float64())
	if c >= m.k {
		c = m.k - 1
	}
	ctr, sd := m.centers[c*m.d:(c+1)*m.d], m.spread[c]
	for j := range v {
		v[j] = ctr[j] + sd*float32(rng.NormFloat64())
	}
	if m.normalize {
		var s float64
		for _, x := range v {
			s += float64(x) * float64(x)
		}
		if s > 0 {
			inv := 1 / math.Sqrt(s)
			for j := range v {
				v[j] = float32(float64(v[j]) * inv)
			}
		}
	}
	return c
}

// name is the stem of the output files: mixture-NxD, with "-unit" when
// rows are normalised.
func (m *mixture) name() string {
	if m.normalize {
		return fmt.Sprintf("mixture-%dx%d-unit", m.n, m.d)
	}
	return fmt.Sprintf("mixture-%dx%d", m.n, m.d)
}

// write writes OUT/base/NAME-part-XX-of-YY.parquet (NAME is m.name(); base rows, ids
// 0..n-1 in order across files; the folder is the index's --source), OUT/NAME.fvecs (the same rows, if
// m.fvecs) and OUT/NAME-queries.{parquet,fvecs}. File f draws from
// its own PCG stream (seed, f+1), so the output depends only on the flags.
func (m *mixture) write(out string) error {
	if err := m.init(); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(out, "base"), 0o755); err != nil {
		return err
	}
	name := m.name()
	var fw *bufio.Writer
	if m.fvecs {
		ff, err := os.Create(filepath.Join(out, name+".fvecs"))
		if err != nil {
			return err
		}
		defer ff.Close()
		fw = bufio.NewWriterSize(ff, 1<<20)
		defer func() {
			if fw != nil {
				fw.Flush()
			}
		}()
	}
	per := m.n / int64(m.files)
	var id int64
	for f := 0; f < m.files; f++ {
		cnt := per
		if f == m.files-1 {
			cnt = m.n - id
		}
		rng := rand.New(rand.NewPCG(m.seed, uint64(f+1)))
		path := filepath.Join(out, "base", fmt.Sprintf("%s-part-%02d-of-%02d.parquet", name, f, m.files))
		if err := m.file(path, fw, id, cnt, rng); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		id += cnt
		fmt.Fprintf(os.Stderr, "mkdata: %s (%d rows)\n", path, cnt)
	}
	if fw != nil {
		if err := fw.Flush(); err != nil {
			return err
		}
		fw = nil
	}
	qrng := rand.New(rand.NewPCG(m.seed, 0))
	return writeStream(out, name+"-queries", int64(m.q), func(i int64) Row {
		v := make([]float32, m.d)
		c := m.row(qrng, v)
		return Row{ID: i, Label: int32(c), Vec: v}
	})
}

// file streams cnt rows with ids first.. into one Parquet file (row groups
// of 65,536 rows) and, when fw is not nil, appends them to fw as fvecs.
func (m *mixture) file(path string, fw *bufio.Writer, first, cnt int64, rng *rand.Rand) error {
	pf, err := os.Create(path)
	if err != nil {
		return err
	}
	defer pf.Close()
	w := parquet.NewGenericWriter[Row](pf, parquet.Compression(&parquet.Snappy), parquet.MaxRowsPerRowGroup(65536))
	const batchRows = 4096
	batch := make([]Row, batchRows)
	flat := make([]float32, batchRows*m.d)
	for i := range batch {
		batch[i].Vec = flat[i*m.d : (i+1)*m.d : (i+1)*m.d]
	}
	var rec []byte
	for done := int64(0); done < cnt; {
		b := int(min(int64(batchRows), cnt-done))
		for i := 0; i < b; i++ {
			r := &batch[i]
			r.ID = first + done + int64(i)
			r.Label = int32(m.row(rng, r.Vec))
			if fw != nil {
				rec = fvecs.Append(rec[:0], r.Vec)
				fw.Write(rec)
			}
		}
		if _, err := w.Write(batch[:b]); err != nil {
			return err
		}
		done += int64(b)
	}
	if err := w.Close(); err != nil {
		return err
	}
	return pf.Close()
}
