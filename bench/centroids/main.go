// Command centroids writes the leaf centroids of a ParqDB index as .fvecs
// (decoded from their LVQ8 codes), so that the FAISS peer
// (bench/faiss_ivf.py --centroids) searches the same lists:
//
//	centroids WAREHOUSE INDEX OUT.fvecs
package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"

	"github.com/parqdb/parqdb/artifact"
	"github.com/parqdb/parqdb/catalog"
	_ "github.com/parqdb/parqdb/iceberg" // indexes of Iceberg tables too, as the CLI
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "centroids:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) != 3 {
		return errors.New("usage: centroids WAREHOUSE INDEX OUT.fvecs")
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
	a, err := artifact.LoadForSnapshot(ctx, wh, m.CurrentSnapshot())
	if err != nil {
		return err
	}
	f, err := os.Create(args[2])
	if err != nil {
		return err
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	c := a.Centroids
	var buf [4]byte
	for cid := 0; cid < c.NList; cid++ {
		binary.LittleEndian.PutUint32(buf[:], uint32(c.Dim))
		w.Write(buf[:])
		for _, x := range c.Leaf(int32(cid)) {
			binary.LittleEndian.PutUint32(buf[:], math.Float32bits(x))
			w.Write(buf[:])
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "centroids: %d × %d written to %s\n", c.NList, c.Dim, args[2])
	return f.Close()
}
