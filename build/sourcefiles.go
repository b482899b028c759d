package build

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/parqdb/parqdb/internal/source"
	"github.com/parqdb/parqdb/storage"
)

// SourceFilesName is the file in every ivf_postings folder that lists the
// source files the snapshot indexed (docs/parquet-provider-profile.md,
// "Source file list"). It lets refresh tell an append from a rewrite and
// lets verify recompute the table-identity.
const SourceFilesName = "source-files.json"

// SourceFiles is the source file list of one snapshot.
type SourceFiles struct {
	FormatVersion int          `json:"format-version"`
	TableIdentity string       `json:"table-identity"`
	Files         []SourceFile `json:"files"`
}

// SourceFile is one indexed source file.
type SourceFile struct {
	Key     string `json:"key"`
	Size    int64  `json:"size"`
	Version string `json:"version"`
	Rows    int64  `json:"rows"`
}

// sourceFilesOf lists t's files.
func sourceFilesOf(t *source.Table) *SourceFiles {
	sf := &SourceFiles{FormatVersion: 1, TableIdentity: t.Identity(), Files: []SourceFile{}}
	for _, f := range t.Files() {
		sf.Files = append(sf.Files, SourceFile{Key: f.Key, Size: f.Size, Version: f.Version(), Rows: f.Rows})
	}
	return sf
}

// Marshal returns the canonical JSON form.
func (sf *SourceFiles) Marshal() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(sf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// ReadSourceFiles reads the source file list of the postings folder loc.
func ReadSourceFiles(ctx context.Context, wh storage.Bucket, loc string) (*SourceFiles, error) {
	key := loc + SourceFilesName
	data, err := storage.ReadAll(ctx, wh, key)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var sf SourceFiles
	if err := dec.Decode(&sf); err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	if sf.FormatVersion != 1 {
		return nil, fmt.Errorf("%s: format-version %d is not 1", key, sf.FormatVersion)
	}
	if !slices.IsSortedFunc(sf.Files, func(a, b SourceFile) int { return strings.Compare(a.Key, b.Key) }) {
		return nil, fmt.Errorf("%s: files are not in key order", key)
	}
	return &sf, nil
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

func diffSources(old *SourceFiles, now *source.Table) change {
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
