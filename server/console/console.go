// Package console holds the web console of parqdb serve: a few static
// files (HTML, CSS, JavaScript written by hand, no framework), embedded in
// the binary, that the server answers under /console/. The console reads
// everything it shows through the server's HTTP API (docs/serve.md,
// "Web console"); it loads nothing from anywhere else.
package console

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"path"
	"strings"
)

//go:embed web
var files embed.FS

// File is one file of the console.
type File struct {
	Body        []byte
	ContentType string
	// ETag is a strong entity tag of Body (quoted).
	ETag string
}

var byName = load()

func load() map[string]File {
	m := map[string]File{}
	err := fs.WalkDir(files, "web", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := files.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		m[strings.TrimPrefix(p, "web/")] = File{b, contentType(p), `"` + hex.EncodeToString(sum[:12]) + `"`}
		return nil
	})
	if err != nil { // the embedded tree is fixed at build time
		panic("console: " + err.Error())
	}
	return m
}

func contentType(p string) string {
	switch path.Ext(p) {
	case ".html":
		return "text/html; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	}
	return "application/octet-stream"
}

// Lookup returns the file at name, a path below /console/ ("" is
// index.html). The returned File is shared: callers must not modify Body.
func Lookup(name string) (File, bool) {
	if name == "" {
		name = "index.html"
	}
	f, ok := byName[name]
	return f, ok
}

// Names returns the names of the console's files.
func Names() []string {
	out := make([]string, 0, len(byName))
	for n := range byName {
		out = append(out, n)
	}
	return out
}
