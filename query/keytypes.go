package query

import "github.com/parqdb/parqdb/internal/source"

// KeyTypes returns the source key fields' types, in key order: what
// Hit.Key decodes with (source.DecodeKey) and the Parquet node of each
// field. The slice is shared: do not modify it.
func (ix *Index) KeyTypes() []source.KeyType { return ix.layout.Keys }
