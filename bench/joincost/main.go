// Command joincost measures what a join costs on top of a search, in
// process CPU time (user + system, all goroutines), one query at a time:
// it opens index NAME, runs every query of QUERIES (.fvecs) once returning
// the key column only (warm-up), then times a keys-only pass, a first
// joined pass (COLUMNS, comma-separated) and a second joined pass, and
// prints the three CPU times and the ratios keys/join. docs/benchmarks.md,
// "Joined results", runs it on Fashion-MNIST.
//
//	joincost [-k 10] [-nprobe 8] [-key id] WAREHOUSE NAME QUERIES COLUMNS
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/parqdb/parqdb/catalog"
	_ "github.com/parqdb/parqdb/iceberg" // indexes of Iceberg tables too, as the CLI
	"github.com/parqdb/parqdb/internal/fvecs"
	"github.com/parqdb/parqdb/query"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "joincost:", err)
		os.Exit(1)
	}
}

func run() error {
	k := flag.Int("k", 10, "neighbours per query")
	nprobe := flag.Int("nprobe", 8, "lists probed")
	key := flag.String("key", "id", "the key column (the keys-only pass)")
	flag.Parse()
	if flag.NArg() != 4 {
		return errors.New("usage: joincost [-k 10] [-nprobe 8] [-key id] WAREHOUSE NAME QUERIES COLUMNS")
	}
	dir, name, qfile, cols := flag.Arg(0), flag.Arg(1), flag.Arg(2), strings.Split(flag.Arg(3), ",")
	ctx := context.Background()
	spec := catalog.SpecFromEnviron() // the catalog: PARQDB_CATALOG
	spec.Warehouse = dir
	e, err := catalog.OpenEnv(ctx, spec)
	if err != nil {
		return err
	}
	defer e.Close()
	ix, err := query.Open(ctx, query.Env{Warehouse: e.Warehouse, Catalog: e.Catalog}, name, query.OpenOptions{})
	if err != nil {
		return err
	}
	defer ix.Close()
	qs, err := fvecs.Read(qfile, 0)
	if err != nil {
		return err
	}
	pass := func(columns []string) (time.Duration, error) {
		c0 := processCPU()
		for i, q := range qs {
			if _, err := ix.Search(ctx, q, query.Options{K: *k, NProbe: *nprobe, Columns: columns}); err != nil {
				return 0, fmt.Errorf("%s: query %d: %w", qfile, i, err)
			}
		}
		return processCPU() - c0, nil
	}
	keys := []string{*key}
	if _, err := pass(keys); err != nil {
		return err
	}
	kt, err := pass(keys)
	if err != nil {
		return err
	}
	j1, err := pass(cols)
	if err != nil {
		return err
	}
	j2, err := pass(cols)
	if err != nil {
		return err
	}
	fmt.Printf("queries %d  cpu keys-only %v  joined first pass %v (ratio %.2f)  joined second pass %v (ratio %.2f)\n",
		len(qs), kt.Round(time.Millisecond), j1.Round(time.Millisecond), kt.Seconds()/j1.Seconds(),
		j2.Round(time.Millisecond), kt.Seconds()/j2.Seconds())
	return nil
}

// processCPU is the process's user + system time so far.
func processCPU() time.Duration {
	var r syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &r); err != nil {
		return 0
	}
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}
