package verify

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
)

// sourceFile is one data file as the table-identity recipe sees it.
type sourceFile struct {
	Key     string
	Size    int64
	Version string // "etag:…" or "mtime:…"
}

// tableIdentity recomputes a parquet source's table-identity from its file
// list with the recipe of docs/parquet-provider-profile.md §2, written here
// again rather than called, so that verify does not trust the code that
// produced the value it checks:
//
//	sha256 of "parqdb-source-identity-v1\n" + for each file in ascending
//	byte order of key: <len(key)> ":" <key> " " <size> " " <version> "\n"
func tableIdentity(files []sourceFile) string {
	fs := slices.Clone(files)
	slices.SortFunc(fs, func(a, b sourceFile) int { return strings.Compare(a.Key, b.Key) })
	h := sha256.New()
	h.Write([]byte("parqdb-source-identity-v1\n"))
	var line []byte
	for _, f := range fs {
		line = strconv.AppendInt(line[:0], int64(len(f.Key)), 10)
		line = append(line, ':')
		line = append(line, f.Key...)
		line = append(line, ' ')
		line = strconv.AppendInt(line, f.Size, 10)
		line = append(line, ' ')
		line = append(line, f.Version...)
		line = append(line, '\n')
		h.Write(line)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}
