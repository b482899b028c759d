package metadata

import (
	"errors"
	"strings"

	"github.com/parqdb/parqdb/internal/errclass"
)

// ErrInvalid is wrapped by every error that reports a document or value
// breaking the metadata spec, the IVF metadata rules or ParqDB's rulings
// (docs/format.md): parse errors, validation errors and failed
// cross-checks. Test for it with errors.Is. It is of the corrupt class
// (errclass.ErrCorrupt): metadata is stored data, and a document that
// breaks the spec is damaged.
var ErrInvalid = errclass.Corrupt("invalid metadata")

// ErrIdentityChanged is returned by Successor when the new snapshot's
// logical identity fields (vector-field, source-key-fields, index-family,
// metric) differ from the base metadata's: that is a new index with a new
// index-uuid, not a successor.
var ErrIdentityChanged = errors.New("identity field changed: this is a new index, not a successor")

// ErrCurrentSnapshot is returned by RemoveSnapshots when asked to remove the
// current snapshot.
var ErrCurrentSnapshot = errors.New("cannot remove the current snapshot")

// ErrNoSnapshot is returned by RemoveSnapshots when an id names no retained
// snapshot.
var ErrNoSnapshot = errors.New("no such snapshot")

// Problem is one way a document breaks a rule. Path is the JSON path of the
// offending value, such as "snapshots[1].parameters.nlist" (see JSONPath for
// the notation); it is "" for the document as a whole. Rule says, in words,
// which rule is broken and how.
type Problem struct {
	Path string
	Rule string
}

// String formats p as "PATH: RULE", or "(document): RULE" when Path is "".
func (p Problem) String() string {
	path := p.Path
	if path == "" {
		path = "(document)"
	}
	return path + ": " + p.Rule
}

// ValidationError lists every problem found in one document. File names the
// document ("" when it came from memory). It unwraps to ErrInvalid.
type ValidationError struct {
	File     string
	Problems []Problem
}

// Error lists every problem, one per line, each as "FILE: PATH: RULE"
// (without "FILE: " when File is empty).
func (e *ValidationError) Error() string {
	if len(e.Problems) == 0 {
		return e.prefix() + ErrInvalid.Error()
	}
	var b strings.Builder
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.prefix())
		b.WriteString(p.String())
	}
	return b.String()
}

func (e *ValidationError) prefix() string {
	if e.File == "" {
		return ""
	}
	return e.File + ": "
}

// Unwrap returns ErrInvalid.
func (e *ValidationError) Unwrap() error { return ErrInvalid }

// problems collects Problems while a document or value is checked.
type problems struct {
	list []Problem
	// okLocs remembers the last few locations that passed location.Check
	// (a pure function) during this check: retained snapshots mostly
	// repeat their neighbours' locations.
	okLocs [4]string
	nextOK int
}

func (ps *problems) add(path, rule string) {
	ps.list = append(ps.list, Problem{Path: path, Rule: rule})
}

// at adds a problem at the lazily built path p, formatting it now.
func (ps *problems) at(p jpath, rule string) {
	ps.add(p.String(), rule)
}

// err returns a *ValidationError naming file, or nil when nothing was found.
func (ps *problems) err(file string) error {
	if len(ps.list) == 0 {
		return nil
	}
	return &ValidationError{File: file, Problems: ps.list}
}
