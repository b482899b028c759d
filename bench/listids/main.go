// Command listids writes the list (CID) that a ParqDB index assigned to each
// source row, so that the FAISS peer (bench/faiss_ivf.py --list-ids) adds
// every row to the same list and both engines search the same lists:
//
//	listids WAREHOUSE INDEX OUT.i32
//
// The index's single key field must be an integer row number 0…N-1 (the id
// column of bench/mkdata, which is the row's position in the base .fvecs).
// OUT.i32 holds N little-endian int32, the CID of row 0, 1, …; every row
// must appear exactly once in the postings.
package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"

	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/postings"
	"github.com/parqdb/parqdb/storage"
	"github.com/parquet-go/parquet-go"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "listids:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) != 3 {
		return errors.New("usage: listids WAREHOUSE INDEX OUT.i32")
	}
	ctx := context.Background()
	spec := catalog.SpecFromEnviron() // the catalog: PARQDB_CATALOG
	spec.Warehouse = args[0]
	e, err := catalog.OpenEnv(ctx, spec)
	if err != nil {
		return err
	}
	defer e.Close()
	wh := e.Warehouse
	m, _, err := catalog.LoadMetadata(ctx, e.Catalog, wh, args[1])
	if err != nil {
		return err
	}
	snap := m.CurrentSnapshot()
	if snap == nil {
		return fmt.Errorf("index %s has no snapshot", args[1])
	}
	mkey := postings.SnapshotLayout(snap).Manifest()
	data, err := storage.ReadAll(ctx, wh, mkey)
	if err != nil {
		return fmt.Errorf("read postings manifest: %w", err)
	}
	man, err := postings.ParseManifest(data)
	if err != nil {
		return fmt.Errorf("%s: %w", mkey, err)
	}
	s := man.Schema()
	if len(s.Keys) != 1 || len(snap.SourceKeyFields) != 1 {
		return fmt.Errorf("index %s: %d key fields, want one integer row number", args[1], len(s.Keys))
	}
	s.Keys[0].Name = snap.SourceKeyFields[0]
	n := man.Rows
	cids := make([]int32, n)
	for i := range cids {
		cids[i] = -1
	}
	for _, fe := range man.Files {
		obj, err := wh.Open(ctx, fe.Path)
		if err != nil {
			return err
		}
		var vals []parquet.Value
		_, err = postings.ReadFile(obj, obj.Size(), s, func(g int, row postings.Row) error {
			vals, err = s.DecodeKey(row.Key)
			if err != nil {
				return fmt.Errorf("row group %d: key: %w", g, err)
			}
			var id int64
			switch vals[0].Kind() {
			case parquet.Int64:
				id = vals[0].Int64()
			case parquet.Int32:
				id = int64(vals[0].Int32())
			default:
				return fmt.Errorf("row group %d: key %s is not an integer", g, vals[0])
			}
			if id < 0 || id >= n {
				return fmt.Errorf("row group %d: key %d outside the row numbers 0…%d", g, id, n-1)
			}
			if cids[id] >= 0 {
				return fmt.Errorf("row group %d: key %d in lists %d and %d", g, id, cids[id], row.CID)
			}
			cids[id] = row.CID
			return nil
		})
		obj.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", fe.Path, err)
		}
	}
	for id, c := range cids {
		if c < 0 {
			return fmt.Errorf("row %d is in no list", id)
		}
	}
	f, err := os.Create(args[2])
	if err != nil {
		return err
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	if err := binary.Write(w, binary.LittleEndian, cids); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "listids: %d rows, nlist %d, written to %s\n", n, man.NList, args[2])
	return f.Close()
}
