package indexer

import (
	"context"
	"fmt"

	"github.com/parqdb/parqdb/internal/source"
	"github.com/parqdb/parqdb/postings"
	"github.com/parqdb/parqdb/storage"
)

// sourceFilesOf lists t's files for the postings folder's source-files.json.
func sourceFilesOf(t *source.Table) *postings.SourceFiles {
	sf := &postings.SourceFiles{FormatVersion: 1, TableIdentity: t.Identity(), Files: []postings.SourceFile{}}
	for _, f := range t.Files() {
		sf.Files = append(sf.Files, postings.SourceFile{Key: f.Key, Size: f.Size, Version: f.Version(), Rows: f.Rows})
	}
	return sf
}

// ReadSourceFiles reads the source file list of the snapshot whose
// postings table is at loc (postings.SourceFilesLocation).
func ReadSourceFiles(ctx context.Context, wh storage.Bucket, loc string) (*postings.SourceFiles, error) {
	key := postings.SourceFilesLocation(loc)
	data, err := storage.ReadAll(ctx, wh, key)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", key, err)
	}
	sf, err := postings.ParseSourceFiles(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	return sf, nil
}

// change classifies how the source moved from old to now.
type change struct {
	same       bool     // identical file lists
	appendOnly bool     // every old file unchanged, some added
	added      []string // keys of added files
	removed    []string // keys of removed files
	rewritten  []string // keys whose size or version changed
	addedRows  int64
}

func diffSources(old *postings.SourceFiles, now *source.Table) change {
	var c change
	cur := map[string]source.File{}
	for _, f := range now.Files() {
		cur[f.Key] = f
	}
	seen := map[string]bool{}
	for _, f := range old.Files {
		seen[f.Key] = true
		n, ok := cur[f.Key]
		switch {
		case !ok:
			c.removed = append(c.removed, f.Key)
		case n.Size != f.Size || n.Version() != f.Version:
			c.rewritten = append(c.rewritten, f.Key)
		}
	}
	for _, f := range now.Files() {
		if !seen[f.Key] {
			c.added = append(c.added, f.Key)
			c.addedRows += f.Rows
		}
	}
	c.same = len(c.added)+len(c.removed)+len(c.rewritten) == 0
	c.appendOnly = !c.same && len(c.removed)+len(c.rewritten) == 0
	return c
}
