package postings

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// SourceFilesName is the file in every postings side folder
// (Layout.SourceFiles) that lists the
// source files the snapshot indexed (profile §4). It lets refresh tell an
// append from a rewrite and lets verify recompute the table-identity.
const SourceFilesName = "source-files.json"

// SourceFiles is the source file list of one snapshot.
type SourceFiles struct {
	FormatVersion int          `json:"format-version"`
	TableIdentity string       `json:"table-identity"`
	Files         []SourceFile `json:"files"`
}

// SourceFile is one indexed source data file: its key, size, version
// ("etag:…" or "mtime:…") and row count.
type SourceFile struct {
	Key     string `json:"key"`
	Size    int64  `json:"size"`
	Version string `json:"version"`
	Rows    int64  `json:"rows"`
}

// Marshal returns the JSON form written by ParqDB.
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

// ParseSourceFiles parses a source file list and checks its shape: format
// version 1, no unknown member, files in ascending key order without
// duplicates, sizes and rows not negative.
func ParseSourceFiles(data []byte) (*SourceFiles, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var sf SourceFiles
	if err := dec.Decode(&sf); err != nil {
		return nil, errorf(ErrManifest, SourceFilesName, "%v", err)
	}
	if dec.More() {
		return nil, errorf(ErrManifest, SourceFilesName, "data after the object")
	}
	if sf.FormatVersion != 1 {
		return nil, errorf(ErrManifest, SourceFilesName+" format-version", "%d, want 1", sf.FormatVersion)
	}
	if !slices.IsSortedFunc(sf.Files, func(a, b SourceFile) int { return strings.Compare(a.Key, b.Key) }) {
		return nil, errorf(ErrManifest, SourceFilesName+" files", "not in ascending key order")
	}
	for i, f := range sf.Files {
		if f.Key == "" || f.Size < 0 || f.Rows < 0 || (i > 0 && sf.Files[i-1].Key == f.Key) {
			return nil, errorf(ErrManifest, fmt.Sprintf("%s files[%d]", SourceFilesName, i), "empty or duplicate key, or negative size or rows")
		}
	}
	return &sf, nil
}
