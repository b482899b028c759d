package icesource

import "testing"

// TestRelKey: data file paths relative to the table location, whatever
// form of the same location the writer used.
func TestRelKey(t *testing.T) {
	for _, c := range []struct {
		loc, path, key string
		ok             bool
	}{
		{"file:///wh/docs.db/items", "file:///wh/docs.db/items/data/a.parquet", "data/a.parquet", true},
		{"/wh/docs.db/items", "file:///wh/docs.db/items/data/a.parquet", "data/a.parquet", true},
		{"file:///wh/docs.db/items", "/wh/docs.db/items/data/p=1/a.parquet", "data/p=1/a.parquet", true},
		{"s3://b/wh/items", "s3://b/wh/items/data/a.parquet", "data/a.parquet", true},
		{"s3a://b/wh/items", "s3://b/wh/items/data/a.parquet", "data/a.parquet", true},
		{"s3://b/wh/items", "s3n://b/wh/items/data/a.parquet", "data/a.parquet", true},
		{"s3://b/wh/items", "s3://b/wh/items2/data/a.parquet", "", false},
		{"s3://b/wh/items", "s3://other/wh/items/data/a.parquet", "", false},
		{"file:///wh/items", "file:///wh/items/", "", false},
	} {
		key, ok := relKey(c.loc, c.path)
		if key != c.key || ok != c.ok {
			t.Errorf("relKey(%q, %q) = %q, %v; want %q, %v", c.loc, c.path, key, ok, c.key, c.ok)
		}
	}
}
