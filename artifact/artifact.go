// Package artifact stores and loads IVF centroid artifacts in the warehouse
// (ivf-index-schema §3): the immutable ivf_centroids and ivf_roots tables
// and the centroid metadata document that names them, and finds an
// artifact that a new index over the same exact source state may reuse.
package artifact

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/google/uuid"

	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/internal/source"
	"github.com/parqdb/parqdb/ivf"
	"github.com/parqdb/parqdb/location"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/postings"
	"github.com/parqdb/parqdb/storage"

	"github.com/parqdb/parqdb/internal/errclass"
)

// ErrMismatch reports a centroid artifact that does not match the snapshot
// or descriptor that references it. It is of the corrupt class
// (errclass.ErrCorrupt).
var ErrMismatch = errclass.Corrupt("centroid artifact does not match")

// Artifact is a loaded centroid artifact.
type Artifact struct {
	// Location is the warehouse-relative location of the metadata document.
	Location  string
	Meta      *metadata.CentroidMetadata
	Centroids *ivf.Centroids
}

// Written lists what Write stored, for accounting and cleanup.
type Written struct {
	Keys  []string
	Bytes int64
}

// Write stores c as a new artifact described by desc: the centroid and
// root tables first, then the metadata document (put-if-absent), so a
// reader that finds the document finds complete tables. On error, Written
// lists what was stored before the failure.
func Write(ctx context.Context, wh storage.Bucket, c *ivf.Centroids, desc metadata.Descriptor, nowMs int64) (*Artifact, Written, error) {
	var w Written
	art := uuid.New()
	centLoc := postings.CentroidsLocation(art)
	rootsLoc := postings.RootsLocationFor(centLoc)
	cidBucket := make([]int32, c.NList)
	for r := 0; r < c.NumRoots(); r++ {
		for cid := c.CIDOffsets[r]; cid < c.CIDOffsets[r+1]; cid++ {
			cidBucket[cid] = int32(r)
		}
	}
	put := func(key string, fill func(io.Writer) error) error {
		n, err := storage.WriteWith(ctx, wh, key, fill)
		if err != nil {
			return err
		}
		w.Keys = append(w.Keys, key)
		w.Bytes += n
		return nil
	}
	if err := put(centLoc+postings.CentroidsFile, func(sw io.Writer) error {
		return postings.WriteCentroids(sw, c.Dim, cidBucket, c.Offsets, c.Scales, c.Codes)
	}); err != nil {
		return nil, w, err
	}
	if err := put(rootsLoc+postings.RootsFile, func(sw io.Writer) error {
		return postings.WriteRoots(sw, c.Dim, c.CIDOffsets, c.Roots)
	}); err != nil {
		return nil, w, err
	}
	cm := &metadata.CentroidMetadata{
		FormatVersion: 1,
		ArtifactUUID:  art.String(),
		Fingerprint:   metadata.Fingerprint(desc),
		CreatedAtMs:   nowMs,
		Descriptor:    desc,
		Centroids:     centLoc,
		Roots:         rootsLoc,
	}
	data, err := metadata.MarshalCentroid(cm)
	if err != nil {
		return nil, w, err
	}
	loc := postings.CentroidMetadataLocation(art)
	if err := wh.PutIfAbsent(ctx, loc, data); err != nil {
		return nil, w, fmt.Errorf("write centroid metadata %s: %w", loc, err)
	}
	w.Keys = append(w.Keys, loc)
	w.Bytes += int64(len(data))
	return &Artifact{Location: loc, Meta: cm, Centroids: c}, w, nil
}

// ReadMeta reads and validates the centroid metadata document at loc.
func ReadMeta(ctx context.Context, wh storage.Bucket, loc string) (*metadata.CentroidMetadata, error) {
	if err := location.Check(loc); err != nil {
		return nil, err
	}
	data, err := storage.ReadAll(ctx, wh, loc)
	if err != nil {
		return nil, fmt.Errorf("read centroid metadata %s: %w", loc, err)
	}
	return metadata.ParseCentroidFile(loc, data)
}

// CheckProviders checks that snapshot s is laid out by providers this
// implementation knows, before anything it names is read: the
// index-provider (postings.CheckIndexProvider), both index-table
// definitions (postings.CheckIndexTable; with a non-nil index UUID the
// postings folder must be that index's) and the source-table provider and
// properties. The metadata spec leaves providers to implementations, so a
// snapshot may be valid metadata and still name a provider ParqDB cannot
// serve; every open path refuses it, as it refuses an unknown index family.
// Errors wrap postings.ErrProperties and name the snapshot and the field.
func CheckProviders(s *metadata.Snapshot, index uuid.UUID) error {
	where := fmt.Sprintf("snapshot %d", s.SnapshotID)
	if err := postings.CheckIndexProvider(s.IndexProvider.Provider, s.IndexProvider.Properties); err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	for _, role := range []string{metadata.RoleCentroids, metadata.RolePostings} {
		d, ok := s.IndexTables[role]
		if !ok {
			return fmt.Errorf("%s: %w: index-tables has no %s", where, postings.ErrProperties, role)
		}
		if err := postings.CheckIndexTable(role, d.DefinitionVersion, d.Properties, index); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
	}
	p, err := source.Lookup(s.SourceTable.Provider)
	if err != nil {
		return fmt.Errorf("%s: source-table: %w", where, err)
	}
	if p != nil {
		// A linked provider's table (an Iceberg table, docs/iceberg.md).
		if err := p.CheckProperties(s.SourceTable.Properties); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		return nil
	}
	if err := postings.CheckSourceProvider(s.SourceTable.Provider); err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	if err := postings.CheckSourceProperties(s.SourceTable.Properties); err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	return nil
}

// LoadForSnapshot loads the artifact a snapshot references and checks the
// §2 cross rules between them. It first refuses a snapshot whose providers
// this implementation does not know (CheckProviders, without the index
// UUID, which the caller checks if it has it).
func LoadForSnapshot(ctx context.Context, wh storage.Bucket, s *metadata.Snapshot) (*Artifact, error) {
	if err := CheckProviders(s, uuid.Nil); err != nil {
		return nil, err
	}
	loc := s.Parameters[metadata.ParamCentroidsLocation]
	cm, err := ReadMeta(ctx, wh, loc)
	if err != nil {
		return nil, err
	}
	if err := metadata.CheckSnapshotAgainstCentroid(s, cm); err != nil {
		return nil, fmt.Errorf("%s: %w", loc, err)
	}
	c, err := LoadTables(ctx, wh, cm)
	if err != nil {
		return nil, err
	}
	return &Artifact{Location: loc, Meta: cm, Centroids: c}, nil
}

// LoadTables reads the centroid and root tables of cm and returns them as
// validated, prepared Centroids.
func LoadTables(ctx context.Context, wh storage.Bucket, cm *metadata.CentroidMetadata) (*ivf.Centroids, error) {
	dim := int(cm.Descriptor.Dimension)
	centKey, err := location.Join(cm.Centroids, postings.CentroidsFile)
	if err != nil {
		return nil, err
	}
	rootsKey, err := location.Join(cm.Roots, postings.RootsFile)
	if err != nil {
		return nil, err
	}
	c := &ivf.Centroids{Dim: dim}
	var cidBucket []int32
	err = withObject(ctx, wh, centKey, func(o storage.Object) (err error) {
		cidBucket, c.Offsets, c.Scales, c.Codes, err = postings.ReadCentroids(o, o.Size(), dim)
		return err
	})
	if err != nil {
		return nil, err
	}
	err = withObject(ctx, wh, rootsKey, func(o storage.Object) (err error) {
		c.CIDOffsets, c.Roots, err = postings.ReadRoots(o, o.Size(), dim)
		return err
	})
	if err != nil {
		return nil, err
	}
	c.NList = len(c.Offsets)
	if c.NList != int(cm.Descriptor.NList) {
		return nil, fmt.Errorf("%s: %w: %d centroids, descriptor nlist %d", centKey, ErrMismatch, c.NList, cm.Descriptor.NList)
	}
	if err := postings.CheckHierarchy(cidBucket, c.CIDOffsets); err != nil {
		return nil, fmt.Errorf("%s: %w", centKey, err)
	}
	if err := c.Prepare(); err != nil {
		return nil, fmt.Errorf("%s: %w", centKey, err)
	}
	return c, nil
}

// wholeReadMax is the largest centroid or root table read with one
// request: the readers read every column anyway, and one GET instead of a
// few per column keeps an index's open at a constant number of requests
// whatever its nlist (10M rows × 96 dimensions: 12,649 centroids, 5 MB).
const wholeReadMax = 256 << 20

func withObject(ctx context.Context, wh storage.Bucket, key string, fn func(storage.Object) error) error {
	o, err := wh.Open(ctx, key)
	if err != nil {
		return err
	}
	defer o.Close()
	if n := o.Size(); n > 0 && n <= wholeReadMax {
		buf := make([]byte, n)
		if nr, err := o.ReadAt(buf, 0); nr < len(buf) || (err != nil && !errors.Is(err, io.EOF)) {
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			return fmt.Errorf("%s: %w", key, err)
		}
		o = memObject{bytes.NewReader(buf)}
	}
	if err := fn(o); err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	return nil
}

// FindReusable looks for a centroid artifact that an index over the source
// state src with descriptor desc may reuse: one referenced by the current
// snapshot of a catalog index bound to exactly src (the catalog scopes reuse
// by its source binding, ivf-index-schema §3) whose descriptor equals desc
// field by field. It returns nil when there is none. Indexes that cannot be
// read are passed over.
func FindReusable(ctx context.Context, cat catalog.Catalog, wh storage.Bucket, src metadata.TableDefinition, desc metadata.Descriptor) (*Artifact, error) {
	names, err := cat.List(ctx)
	if err != nil {
		return nil, err
	}
	fp := metadata.Fingerprint(desc)
	for _, name := range names {
		m, _, err := catalog.LoadMetadata(ctx, cat, wh, name)
		if err != nil {
			continue
		}
		s := m.CurrentSnapshot()
		if s == nil || !catalog.SameTable(s.SourceTable, src) || s.Parameters[metadata.ParamFingerprint] != fp {
			continue
		}
		a, err := LoadForSnapshot(ctx, wh, s)
		if err != nil || a.Meta.Descriptor != desc {
			continue
		}
		return a, nil
	}
	return nil, nil
}

// memObject is an object already read into memory.
type memObject struct{ *bytes.Reader }

func (memObject) Close() error { return nil }
