package source

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/parqdb/parqdb/internal/source/sourcetest"
	"github.com/parqdb/parqdb/storage"
)

func TestOpenFolders(t *testing.T) {
	b := newMem()
	one := func(key string, id int64) {
		writeVectors(t, b, key, []int64{id}, [][]float32{{1, 2}}, sourcetest.Options{})
	}
	one("t/a.parquet", 1)
	one("t/sub/b.parquet", 2)
	one("t/_tmp/c.parquet", 3)            // hidden folder
	one("t/.hidden.parquet", 4)           // hidden file
	one("t/_SUCCESS.parquet", 5)          // marker
	one("t2/x.parquet", 6)                // sibling folder sharing the prefix "t"
	b.put("t/notes.txt", []byte("hello")) // not Parquet
	one("out.parquet/p0.parquet", 8)      // a folder named like a file (Spark)
	one("single.parquet", 9)
	b.put("t/garbage.parquet.crc", []byte("x"))
	cases := []struct {
		prefix string
		want   []string
	}{
		{"t", []string{"t/a.parquet", "t/sub/b.parquet"}},
		{"t/", []string{"t/a.parquet", "t/sub/b.parquet"}},
		{"out.parquet", []string{"out.parquet/p0.parquet"}},
		{"single.parquet", []string{"single.parquet"}},
		{"t/notes.txt", []string{"t/notes.txt"}}, // an explicitly named object is taken as is
		{"", []string{"out.parquet/p0.parquet", "single.parquet", "t/a.parquet", "t/sub/b.parquet", "t2/x.parquet"}},
	}
	for _, c := range cases {
		t.Run(c.prefix, func(t *testing.T) {
			st, err := Open(context.Background(), b, c.prefix)
			if c.prefix == "t/notes.txt" {
				if !errors.Is(err, ErrCorrupt) || !bytesContains(err.Error(), `file "t/notes.txt"`) {
					t.Fatalf("Open(notes.txt) = %v, want ErrCorrupt naming the file", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			var keys []string
			for _, f := range st.Files() {
				keys = append(keys, f.Key)
				if f.Rows != 1 || f.RowGroups != 1 || f.Size == 0 {
					t.Errorf("file %+v", f)
				}
			}
			if !slices.Equal(keys, c.want) {
				t.Fatalf("files %v, want %v", keys, c.want)
			}
			if st.NumRows() != int64(len(c.want)) {
				t.Errorf("NumRows %d", st.NumRows())
			}
		})
	}
	// A hidden folder named explicitly is read.
	if st, err := Open(context.Background(), b, "t/_tmp"); err != nil || st.Files()[0].Key != "t/_tmp/c.parquet" {
		t.Errorf("Open(t/_tmp) = %v", err)
	}
	for _, p := range []string{"nothing", "nothing/"} {
		if _, err := Open(context.Background(), b, p); !errors.Is(err, ErrEmpty) {
			t.Errorf("Open(%q) = %v, want ErrEmpty", p, err)
		}
	}
	if _, err := Open(context.Background(), b, "missing.parquet"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open(missing) = %v, want ErrNotExist", err)
	}
}

func bytesContains(s, sub string) bool { return bytes.Contains([]byte(s), []byte(sub)) }

// TestIdentityRecipe recomputes Identity from its documented recipe.
func TestIdentityRecipe(t *testing.T) {
	b := newMem()
	writeVectors(t, b, "d/b.parquet", []int64{1}, [][]float32{{1}}, sourcetest.Options{})
	writeVectors(t, b, "d/a.parquet", []int64{2}, [][]float32{{1}}, sourcetest.Options{})
	st := mustOpen(t, b, "d")
	text := "parqdb-source-identity-v1\n"
	for _, k := range []string{"d/a.parquet", "d/b.parquet"} {
		in, _ := b.Stat(context.Background(), k)
		text += fmt.Sprintf("%d:%s %d etag:%s\n", len(k), k, in.Size, in.ETag)
	}
	sum := sha256.Sum256([]byte(text))
	if want := "sha256:" + hex.EncodeToString(sum[:]); st.Identity() != want {
		t.Fatalf("Identity %s, want %s", st.Identity(), want)
	}
	// Without ETags the modification time stands in.
	if v := fileVersion(File{ModTime: time.Unix(5, 7)}); v != "mtime:5000000007" {
		t.Errorf("fileVersion = %q", v)
	}
}

// TestIdentityChanges runs against the local folder bucket: any added,
// removed or rewritten file changes the identity; nothing else does.
func TestIdentityChanges(t *testing.T) {
	dir := t.TempDir()
	lb, err := storage.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, keys []int64) {
		var buf bytes.Buffer
		if err := sourcetest.WriteVectors(&buf, keys, [][]float32{{1, 2}}, sourcetest.Options{}); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, "src", name)
		if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, buf.Bytes(), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	id := func() string {
		st, err := Open(context.Background(), lb, "src")
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		return st.Identity()
	}
	write("a.parquet", []int64{1})
	write("b.parquet", []int64{2})
	base := id()
	if again := id(); again != base {
		t.Fatalf("identity not stable: %s then %s", base, again)
	}
	prev := base
	step := func(name string, change func()) {
		change()
		got := id()
		if got == prev {
			t.Fatalf("%s: identity unchanged", name)
		}
		prev = got
	}
	step("add", func() { write("c.parquet", []int64{3}) })
	step("remove", func() { os.Remove(filepath.Join(dir, "src", "c.parquet")) })
	if prev != base {
		t.Fatalf("removing the added file did not restore the identity")
	}
	step("rewrite same size", func() {
		time.Sleep(10 * time.Millisecond) // a distinct mtime on coarse clocks
		write("a.parquet", []int64{7})
	})
	step("touch", func() {
		p := filepath.Join(dir, "src", "b.parquet")
		os.Chtimes(p, time.Now(), time.Now().Add(time.Hour))
	})
	// Ignored files do not change it.
	before := id()
	os.WriteFile(filepath.Join(dir, "src", "_SUCCESS"), nil, 0o666)
	os.WriteFile(filepath.Join(dir, "src", "notes.txt"), []byte("x"), 0o666)
	if after := id(); after != before {
		t.Errorf("ignored files changed the identity")
	}
}
