// Command search is the README's Go example: it opens the index "words"
// that the README's first command builds in ./warehouse and prints the ten
// words nearest to the vector of "king".
package main

import (
	"context"
	"fmt"
	"log"

	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/query"
	"github.com/parqdb/parqdb/storage"
)

func main() {
	ctx := context.Background()
	wh, err := storage.Open(ctx, "warehouse") // a folder or s3://bucket/prefix
	if err != nil {
		log.Fatal(err)
	}
	cat, err := catalog.Open(ctx, "", wh) // "": SQLite in warehouse/catalog.db
	if err != nil {
		log.Fatal(err)
	}
	defer cat.Close()

	ix, err := query.Open(ctx, query.Env{Warehouse: wh, Catalog: cat}, "words", query.OpenOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer ix.Close()

	key, err := ix.ParseKey([]string{"king"})
	if err != nil {
		log.Fatal(err)
	}
	vec, err := ix.VectorOf(ctx, key) // any []float32 of the index's dimension will do
	if err != nil {
		log.Fatal(err)
	}
	res, err := ix.Search(ctx, vec, query.Options{K: 10, NProbe: 8, Refine: 4, Columns: []string{"word"}})
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range res.Hits {
		fmt.Println(h.Row["word"], h.Distance)
	}
}
