// Command binsize says what each part of a Go binary costs in bytes: the
// sizes of its symbols that take room in the file (code, read-only data,
// data; not .bss or .noptrbss), summed by the module they belong to
// (github.com/owner/repo, golang.org/x/name, …; the standard library and
// the runtime as one part), largest first, then their total and the file
// size.
//
//	go build -o /tmp/search ./examples/search && go run ./bench/binsize /tmp/search
//
// The binary must keep its symbol table (no -ldflags=-s). The linker's
// per-function tables (.gopclntab, which grow with the code) and the debug
// sections are not symbols: they make up the difference to the file size.
// docs/benchmarks.md ("Binary size") is made with it.
package main

import (
	"debug/elf"
	"flag"
	"fmt"
	"log"
	"os"
	"sort"
	"strings"
)

func main() {
	top := flag.Int("n", 25, "print the n largest parts")
	flag.Parse()
	if flag.NArg() != 1 {
		log.Fatal("usage: binsize [-n N] BINARY")
	}
	parts, total, err := measure(flag.Arg(0))
	if err != nil {
		log.Fatal(err)
	}
	for i, p := range parts {
		if i == *top {
			break
		}
		fmt.Printf("%12d  %s\n", p.bytes, p.name)
	}
	fi, err := os.Stat(flag.Arg(0))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%12d  all symbols\n%12d  file size\n", total, fi.Size())
}

type part struct {
	name  string
	bytes int64
}

// measure sums the file-backed symbols of the ELF binary at path by module.
func measure(path string) ([]part, int64, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w (build without -ldflags=-s)", path, err)
	}
	sum := map[string]int64{}
	var total int64
	for _, s := range syms {
		i := int(s.Section)
		if i <= 0 || i >= len(f.Sections) || f.Sections[i].Type == elf.SHT_NOBITS {
			continue
		}
		sum[module(s.Name)] += int64(s.Size)
		total += int64(s.Size)
	}
	parts := make([]part, 0, len(sum))
	for k, v := range sum {
		parts = append(parts, part{k, v})
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i].bytes > parts[j].bytes })
	return parts, total, nil
}

// module returns the module a symbol belongs to: the first path elements
// of its package (three for github.com, two for other hosts), or "std and
// runtime" for a package path without a host.
func module(sym string) string {
	for _, p := range []string{"type:.eq.", "type:.hash.", "type:*", "type:", "go:itab.*", "go:itab.", "go:string.", "go:info.", "gclocals·"} {
		if rest, ok := strings.CutPrefix(sym, p); ok {
			sym = rest
			break
		}
	}
	sym = strings.TrimLeft(sym, "*([]")
	elems := strings.Split(sym, "/")
	if len(elems) < 2 || !strings.Contains(elems[0], ".") || strings.ContainsAny(elems[0], "(*[") {
		return "std and runtime"
	}
	n := 2
	if elems[0] == "github.com" || elems[0] == "golang.org" {
		n = 3
	}
	if len(elems) < n {
		n = len(elems)
	}
	last := elems[n-1]
	if i := strings.IndexAny(last, ".("); i >= 0 && n == len(elems) {
		last = last[:i]
	}
	elems[n-1] = last
	return strings.Join(elems[:n], "/")
}
