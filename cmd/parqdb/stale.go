package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/query"
	"github.com/parqdb/parqdb/storage"
)

// warnStale prints, once, that ix reads a snapshot whose source gained
// data it does not index (query.Staleness): the answers are still exact
// for the snapshot, but miss the new rows.
func warnStale(w io.Writer, ix *query.Index) {
	if s := ix.Stale(); s != nil {
		fmt.Fprintf(w, "warning: %s\n", s)
	}
}

// staleState is the stale field of index list and describe: Stale is
// true when the source gained data (Reason says what) or a recorded file
// moved (Reason is the error searches give); nil when the source could
// not be checked (Reason says why).
type staleState struct {
	Stale  *bool  `json:"stale"`
	Reason string `json:"stale_reason,omitempty"`
}

// checkStale compares the source of snap with what it recorded (one
// listing or one Iceberg load; query.SourceStaleness).
func checkStale(ctx context.Context, wh storage.Bucket, snap *metadata.Snapshot, name string) staleState {
	s, err := query.SourceStaleness(ctx, wh, snap, name)
	yes, no := true, false
	var se *query.StaleError
	switch {
	case errors.As(err, &se):
		return staleState{Stale: &yes, Reason: err.Error()}
	case err != nil:
		return staleState{Reason: "cannot check the source: " + err.Error()}
	case s != nil:
		return staleState{Stale: &yes, Reason: s.String()}
	}
	return staleState{Stale: &no}
}

// cell is the table and csv form: true, false, or ? when unknown.
func (s staleState) cell() string {
	if s.Stale == nil {
		return "?"
	}
	return fmt.Sprint(*s.Stale)
}

// displayLocation shortens a local source location below the working
// folder to a relative path for the table form (json and csv keep the
// canonical location).
func displayLocation(loc string) string {
	if strings.Contains(loc, "://") || !filepath.IsAbs(loc) {
		return loc
	}
	wd, err := os.Getwd()
	if err != nil {
		return loc
	}
	rel, err := filepath.Rel(wd, loc)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return loc
	}
	if strings.HasSuffix(loc, "/") {
		rel += "/"
	}
	return rel
}

// warnLogger is the pool logger of one-shot commands (parqdb sql): it
// prints warnings (an index opened stale) as "warning: …" lines on w and
// drops the rest.
func warnLogger(w io.Writer) *slog.Logger { return slog.New(&warnHandler{w: w}) }

type warnHandler struct{ w io.Writer }

func (h *warnHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }

func (h *warnHandler) Handle(_ context.Context, r slog.Record) error {
	msg := r.Message
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "reason" || a.Key == "err" {
			msg = a.Value.String()
			return false
		}
		return true
	})
	_, err := fmt.Fprintf(h.w, "warning: %s\n", msg)
	return err
}

func (h *warnHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *warnHandler) WithGroup(string) slog.Handler      { return h }
