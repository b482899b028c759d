package query

import (
	"strings"
	"testing"

	"github.com/parqdb/parqdb/metadata"
)

// TestStaleMessageState: the stale-source message says what the snapshot
// indexed without a placeholder when its summary lacks the file count (a
// snapshot that optimize committed before it recorded one).
func TestStaleMessageState(t *testing.T) {
	for _, tc := range []struct {
		summary map[string]string
		want    string
	}{
		{map[string]string{"source-files": "3"}, "held 3 files, 9000 rows when"},
		{map[string]string{"source-files": "1"}, "held 1 file, 9000 rows when"},
		{map[string]string{"operation": "optimize"}, "held 9000 rows when"},
		{map[string]string{"source-files": "x"}, "held 9000 rows when"},
	} {
		s := &metadata.Snapshot{SnapshotID: 4, IndexedRows: 9000, Summary: tc.summary}
		msg := (&StaleError{Index: "v", SnapshotID: 4, Location: "/src", Snapshot: snapshotState(s), Now: "4 files, 9100 rows"}).Error()
		if !strings.Contains(msg, tc.want) || strings.Contains(msg, "?") {
			t.Errorf("summary %v: %s\nwant %q and no '?'", tc.summary, msg, tc.want)
		}
	}
}
