package query_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/indexer"
	"github.com/parqdb/parqdb/query"
	"github.com/parqdb/parqdb/storage"
)

// exampleEnv builds the GloVe sample into a temporary warehouse, as
// `parqdb index create words --source … --metric cosine` does.
func exampleEnv() (query.Env, func()) {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "parqdb-example")
	if err != nil {
		log.Fatal(err)
	}
	wh, err := storage.NewLocal(filepath.Join(dir, "wh"))
	if err != nil {
		log.Fatal(err)
	}
	cat, err := catalog.OpenSQLite(ctx, filepath.Join(dir, "wh", "catalog.db"))
	if err != nil {
		log.Fatal(err)
	}
	_, err = indexer.Create(ctx, indexer.Env{Warehouse: wh, Catalog: cat}, indexer.Options{
		Name: "words", Source: glove, VectorField: "embedding", KeyFields: []string{"word"},
		Metric: "cosine", NList: 50,
	})
	if err != nil {
		log.Fatal(err)
	}
	return query.Env{Warehouse: wh, Catalog: cat}, func() { cat.Close(); os.RemoveAll(dir) }
}

// Open an index from its catalog (pinning the current snapshot) and
// search near an existing row.
func ExampleOpen() {
	env, done := exampleEnv()
	defer done()
	ctx := context.Background()
	ix, err := query.Open(ctx, env, "words", query.OpenOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer ix.Close()
	fmt.Println(ix.Dim(), ix.NList(), ix.Snapshot().Metric)
	// Output: 50 50 cosine
}

// Search one vector; results are typed rows with the source columns asked
// for and _distance.
func ExampleIndex_Search() {
	env, done := exampleEnv()
	defer done()
	ctx := context.Background()
	ix, err := query.Open(ctx, env, "words", query.OpenOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer ix.Close()
	vals, _ := ix.ParseKey([]string{"paris"})
	q, err := ix.VectorOf(ctx, vals)
	if err != nil {
		log.Fatal(err)
	}
	res, err := ix.Search(ctx, q, query.Options{K: 3, NProbe: 16, Refine: 4, Columns: []string{"word"}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Columns)
	for _, h := range res.Hits {
		fmt.Printf("%s %.3f\n", h.Row["word"], h.Distance)
	}
	// Output:
	// [word _distance]
	// paris 0.000
	// france 0.197
	// brussels 0.220
}

// Search many vectors at once on all cores; results come back in query
// order.
func ExampleIndex_SearchBatch() {
	env, done := exampleEnv()
	defer done()
	ctx := context.Background()
	ix, err := query.Open(ctx, env, "words", query.OpenOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer ix.Close()
	var qs [][]float32
	for _, w := range []string{"red", "monday"} {
		vals, _ := ix.ParseKey([]string{w})
		v, err := ix.VectorOf(ctx, vals)
		if err != nil {
			log.Fatal(err)
		}
		qs = append(qs, v)
	}
	results, err := ix.SearchBatch(ctx, qs, query.Options{K: 2, NProbe: 50, Refine: 2, KeysOnly: true}, 0)
	if err != nil {
		log.Fatal(err)
	}
	for i, r := range results {
		fmt.Println(i, r.Hits[0].Row["word"], r.Hits[1].Row["word"])
	}
	// Output:
	// 0 red yellow
	// 1 monday tuesday
}

// Search near an existing row by key: the row itself comes first.
func ExampleIndex_SearchNearKey() {
	env, done := exampleEnv()
	defer done()
	ctx := context.Background()
	ix, err := query.Open(ctx, env, "words", query.OpenOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer ix.Close()
	vals, err := ix.ParseKey([]string{"king"})
	if err != nil {
		log.Fatal(err)
	}
	res, err := ix.SearchNearKey(ctx, vals, query.Options{K: 3, NProbe: 50, Refine: 4, Columns: []string{"word", "rank"}})
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range res.Hits {
		fmt.Printf("%v %v %.3f\n", h.Row["word"], h.Row["rank"], h.Distance)
	}
	// Output:
	// king 692 0.000
	// prince 1782 0.176
	// queen 2061 0.216
}

// ExactBatch gives the ground truth that recall is measured against.
func ExampleIndex_ExactBatch() {
	env, done := exampleEnv()
	defer done()
	ctx := context.Background()
	ix, err := query.Open(ctx, env, "words", query.OpenOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer ix.Close()
	vals, _ := ix.ParseKey([]string{"water"})
	q, _ := ix.VectorOf(ctx, vals)
	exact, err := ix.ExactBatch(ctx, [][]float32{q}, 2, 1)
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range exact[0] {
		fmt.Printf("%q %.3f\n", h.Key[:len(h.Key)-2], h.Distance)
	}
	// Output:
	// "water" 0.000
	// "dry" 0.173
}
