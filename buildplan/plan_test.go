package buildplan

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/parqdb/parqdb/postings"
)

func validPlan() *Plan {
	files := []postings.SourceFile{
		{Key: "a.parquet", Size: 100, Version: "etag:1", Rows: 10},
		{Key: "b.parquet", Size: 100, Version: "etag:2", Rows: 30},
		{Key: "c.parquet", Size: 100, Version: "etag:3", Rows: 20},
	}
	return &Plan{
		FormatVersion: 1, Operation: OpCreate, IndexName: "v",
		IndexUUID: "2f1c7f5e-3c43-4a44-8f2a-cf560c4db8d1", SnapshotID: 1,
		PostingsLocation: "indexes/2f1c7f5e3c434a448f2acf560c4db8d1/1-00000000000000aa/ivf_postings/",
		Source:           postings.SourceFiles{FormatVersion: 1, TableIdentity: "sha256:00", Files: files},
		SourceLoc:        "/data/src/", VectorField: "embedding", KeyFields: []string{"id"}, Metric: "l2_squared",
		Encoding: "lvq8", Dimension: 4, NList: 2, Rows: 60,
		CentroidsMetadata: "metadata/5fe015e6-7b8f-4744-864c-b420d8cfa98d/v1.metadata.json",
		Summary:           map[string]string{},
		Shards:            Assign(files, 2),
	}
}

func TestAssignBalancesAndIsDeterministic(t *testing.T) {
	p := validPlan()
	want := []Shard{{Files: []string{"b.parquet"}, Rows: 30}, {Files: []string{"a.parquet", "c.parquet"}, Rows: 30}}
	for i, s := range p.Shards {
		if !slices.Equal(s.Files, want[i].Files) || s.Rows != want[i].Rows {
			t.Fatalf("shard %d: %+v, want %+v", i, s, want[i])
		}
	}
	if s := Assign(p.Source.Files, 5); len(s) != 5 || len(s[4].Files) != 0 || s[4].Files == nil {
		t.Fatalf("more shards than files: %+v", s)
	}
}

func TestValidate(t *testing.T) {
	if err := validPlan().Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, member string
		edit         func(p *Plan)
	}{
		{"version", "format-version", func(p *Plan) { p.FormatVersion = 2 }},
		{"operation", "operation", func(p *Plan) { p.Operation = "merge" }},
		{"create with a base", "operation", func(p *Plan) { p.BaseSnapshotID = 1 }},
		{"refresh without base", "base-snapshot-id", func(p *Plan) { p.Operation = OpRefresh }},
		{"incremental without base manifest", "base-manifest", func(p *Plan) {
			p.Operation, p.BaseSnapshotID, p.SnapshotID = OpRefreshIncremental, 1, 2
			p.PostingsLocation = "indexes/2f1c7f5e3c434a448f2acf560c4db8d1/2-00000000000000aa/ivf_postings/"
		}},
		{"uuid", "index-uuid", func(p *Plan) { p.IndexUUID = "2F1C7F5E-3C43-4A44-8F2A-CF560C4DB8D1" }},
		{"postings of another index", "postings-location", func(p *Plan) {
			p.PostingsLocation = "indexes/0f1c7f5e3c434a448f2acf560c4db8d1/1-00000000000000aa/ivf_postings/"
		}},
		{"postings of another snapshot", "postings-location", func(p *Plan) {
			p.PostingsLocation = "indexes/2f1c7f5e3c434a448f2acf560c4db8d1/2-00000000000000aa/ivf_postings/"
		}},
		{"centroids", "centroids-metadata", func(p *Plan) { p.CentroidsMetadata = "/abs" }},
		{"rows", "rows", func(p *Plan) { p.Rows = 61 }},
		{"unsorted files", "source.files[1]", func(p *Plan) { p.Source.Files[1].Key = "0.parquet" }},
		{"unknown file", "shards[0].files[0]", func(p *Plan) { p.Shards[0].Files[0] = "z.parquet" }},
		{"file twice", "shards[1].files[0]", func(p *Plan) { p.Shards[1].Files[0] = "b.parquet" }},
		{"shard rows", "shards[0].rows", func(p *Plan) { p.Shards[0].Rows = 31 }},
		{"file left out", "shards", func(p *Plan) { p.Shards[1] = Shard{Files: []string{"a.parquet"}, Rows: 10} }},
		{"no shards", "shards", func(p *Plan) { p.Shards = nil }},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := validPlan()
			c.edit(p)
			err := p.Validate()
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.member+":") {
				t.Fatalf("got %v, want an error naming %s", err, c.member)
			}
		})
	}
}

func TestParseStrict(t *testing.T) {
	data, err := validPlan().Marshal()
	if err != nil {
		t.Fatal(err)
	}
	const loc = "indexes/2f1c7f5e3c434a448f2acf560c4db8d1/1-00000000000000aa/plan.json"
	if !IsPlanKey(loc) || Location(validPlan().PostingsLocation) != loc {
		t.Fatalf("plan location %s", Location(validPlan().PostingsLocation))
	}
	if _, err := Parse(loc, data); err != nil {
		t.Fatal(err)
	}
	for name, bad := range map[string]string{
		"unknown member": strings.Replace(string(data), `"format-version"`, `"colour":1,"format-version"`, 1),
		"trailing data":  string(data) + "{}",
		"wrong type":     strings.Replace(string(data), `"nlist": 2`, `"nlist": "2"`, 1),
	} {
		if _, err := Parse(loc, []byte(bad)); !errors.Is(err, ErrInvalid) || !strings.HasPrefix(err.Error(), loc) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
