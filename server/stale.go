package server

import (
	"fmt"
	"net/http"

	"github.com/parqdb/parqdb/query"
)

// StaleHeader is the response header of an answer from a stale snapshot
// (query.Staleness): the source gained files (or, for Iceberg, snapshots)
// that the answer does not see. Its value is ASCII: what was added and the
// command that indexes it, e.g. "2 files added to the source since
// snapshot 3; run parqdb index refresh words".
const StaleHeader = "ParqDB-Stale"

func setStaleHeader(w http.ResponseWriter, s *query.Staleness) {
	if s == nil {
		return
	}
	w.Header().Set(StaleHeader, staleSummary(s))
}

// staleSummary is the short, ASCII form of s (header and description).
func staleSummary(s *query.Staleness) string {
	what := fmt.Sprintf("%d file(s) added to the source", len(s.Added))
	if s.SourceSnapshot != 0 {
		what = fmt.Sprintf("the Iceberg table is at snapshot %d", s.SourceSnapshot)
	}
	return fmt.Sprintf("%s since snapshot %d; run parqdb index refresh %s", what, s.SnapshotID, s.Index)
}
