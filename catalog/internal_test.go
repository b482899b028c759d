package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/parqdb/parqdb/location"
	"github.com/parqdb/parqdb/storage"
)

func TestCheckName(t *testing.T) {
	tests := []struct {
		name string
		rule string // "" for valid; else a fragment of the error
	}{
		{"docs", ""},
		{"A-Z_a-z.0-9", ""},
		{strings.Repeat("n", MaxNameLen), ""},
		{"", "empty"},
		{strings.Repeat("n", MaxNameLen+1), "129 bytes long"},
		{".x", "starts with '.'"},
		{"-x", "starts with '-'"},
		{"a/b", "byte 1 is '/'"},
		{"ü", "byte 0 is 0xC3 (the first byte of 'ü', U+00FC)"},
		{"ÄÖ", "byte 0 is 0xC3 (the first byte of 'Ä', U+00C4)"},
		{"a\xff", "byte 1 is 0xFF"},
		{"a\x00", "byte 1 is 0x00"},
		{"a\tb", "byte 1 is 0x09"},
		{"日本", "byte 0 is 0xE6 (the first byte of '日', U+65E5)"},
		{"a b", "byte 1 is ' '"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckName(tc.name)
			if tc.rule == "" {
				if err != nil {
					t.Fatalf("CheckName(%q) = %v", tc.name, err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidName) || !strings.Contains(err.Error(), tc.rule) {
				t.Fatalf("CheckName(%q) = %v, want ErrInvalidName mentioning %q", tc.name, err, tc.rule)
			}
		})
	}
}

// FuzzCheckName: every accepted name is a valid, single location segment,
// and its version keys parse back.
func FuzzCheckName(f *testing.F) {
	for _, s := range []string{"docs", ".", "..", "a/b", "-", "_", "a:b", strings.Repeat("x", 129)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if CheckName(name) != nil {
			return
		}
		key := versionKey(name, 42)
		if err := location.Check(key); err != nil {
			t.Fatalf("accepted name %q gives bad key: %v", name, err)
		}
		if n, v, ok := parseVersionKey(key); !ok || n != name || v != 42 {
			t.Fatalf("parseVersionKey(%q) = %q, %d, %v", key, n, v, ok)
		}
	})
}

func TestParseVersionKey(t *testing.T) {
	tests := []struct {
		key  string
		name string
		v    int64
	}{
		{"catalog/docs/v00000000000000000001.json", "docs", 1},
		{"catalog/docs/v09223372036854775807.json", "docs", 9223372036854775807},
		{"catalog/docs/v00000000000000000000.json", "", 0},
		{"catalog/docs/v0000000000000000001.json", "", 0},
		{"catalog/docs/v000000000000000000001.json", "", 0},
		{"catalog/docs/v1000000000000000000x.json", "", 0},
		{"catalog/docs/v99999999999999999999.json", "", 0},
		{"catalog/docs/x00000000000000000001.json", "", 0},
		{"catalog/docs/v00000000000000000001.json.tmp", "", 0},
		{"catalog/.docs/v00000000000000000001.json", "", 0},
		{"catalog/docs/sub/v00000000000000000001.json", "", 0},
		{"other/docs/v00000000000000000001.json", "", 0},
	}
	for _, tc := range tests {
		n, v, ok := parseVersionKey(tc.key)
		if ok != (tc.name != "") || n != tc.name || v != tc.v {
			t.Errorf("parseVersionKey(%q) = %q, %d, %v", tc.key, n, v, ok)
		}
	}
}

// TestSQLitePragmas checks the durability settings on every connection.
func TestSQLitePragmas(t *testing.T) {
	ctx := context.Background()
	c, err := OpenSQLite(ctx, filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.db.SetMaxOpenConns(3)
	conns := make([]interface{ Close() error }, 0, 3)
	for range 3 { // several pooled connections, each must be configured
		conn, err := c.db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, conn)
		var mode string
		var sync, busy int
		if err := conn.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
			t.Fatal(err)
		}
		if err := conn.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&sync); err != nil {
			t.Fatal(err)
		}
		if err := conn.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&busy); err != nil {
			t.Fatal(err)
		}
		if mode != "wal" || sync != 2 || busy != int(SQLiteBusyTimeout.Milliseconds()) {
			t.Fatalf("journal_mode %q synchronous %d busy_timeout %d; want wal, 2 (FULL), %d",
				mode, sync, busy, SQLiteBusyTimeout.Milliseconds())
		}
	}
	for _, conn := range conns {
		conn.Close()
	}
}

func TestOpenSQLiteBadPath(t *testing.T) {
	ctx := context.Background()
	for _, p := range []string{"", filepath.Join(t.TempDir(), "a?b.db"), filepath.Join(t.TempDir(), "missing", "dir", "c.db")} {
		if c, err := OpenSQLite(ctx, p); err == nil {
			c.Close()
			t.Errorf("OpenSQLite(%q) succeeded", p)
		}
	}
}

func TestOpenSpecs(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	local, err := storage.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	notLocal := storage.WithFaults(nonLocal{local}, &storage.Faults{})
	tests := []struct {
		spec string
		wh   storage.Bucket
		want string // String() of the catalog, or "error: <fragment>"
	}{
		{"", local, "sqlite:" + filepath.Join(dir, "catalog.db")},
		{"", notLocal, "error: --catalog"},
		{"sqlite:" + filepath.Join(dir, "x.db"), nil, "sqlite:" + filepath.Join(dir, "x.db")},
		{"sqlite://" + filepath.Join(dir, "y.db"), nil, "sqlite:" + filepath.Join(dir, "y.db")},
		{filepath.Join(dir, "z.db"), nil, "sqlite:" + filepath.Join(dir, "z.db")},
		{"warehouse", local, "warehouse catalog in " + local.String()},
		{"warehouse", nil, "error: needs a warehouse"},
		{"sqlite:", nil, "error: needs a path"},
		{"mysql://u:hunter2@h/db", nil, "error: unknown catalog"},
		{"nonsense", local, "error: unknown catalog"},
	}
	for _, tc := range tests {
		t.Run(tc.spec, func(t *testing.T) {
			c, err := Open(ctx, tc.spec, tc.wh)
			if frag, isErr := strings.CutPrefix(tc.want, "error: "); isErr {
				if err == nil {
					c.Close()
					t.Fatalf("Open(%q) succeeded", tc.spec)
				}
				if !strings.Contains(err.Error(), frag) || strings.Contains(err.Error(), "hunter2") {
					t.Fatalf("Open(%q) = %v, want an error mentioning %q and no password", tc.spec, err, frag)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if c.String() != tc.want {
				t.Fatalf("String() = %q, want %q", c.String(), tc.want)
			}
		})
	}
}

// nonLocal hides that a bucket is local.
type nonLocal struct{ storage.Bucket }

func TestSecretsHidden(t *testing.T) {
	const pw = "s3cr3t-Pa55"
	specs := []string{
		"postgres://user:" + pw + "@127.0.0.1:1/db?sslmode=disable&connect_timeout=1",
		"postgresql://user:" + pw + "@127.0.0.1:1/db?connect_timeout=1",
		"postgres://user@127.0.0.1:1/db?password=" + pw + "&connect_timeout=1",
		"postgres://user:" + pw + "@127.0.0.1:notaport/db",
		"postgres://user:" + pw + "@[::1/db",
		"host=127.0.0.1 port=1 user=u password=" + pw + " connect_timeout=1",
		"host=127.0.0.1 port=1 user=u password='" + pw + "' connect_timeout=1",
	}
	for _, spec := range specs {
		c, err := OpenPostgres(context.Background(), spec)
		if err == nil {
			c.Close()
			t.Fatalf("OpenPostgres(%q) succeeded without a server", spec)
		}
		if strings.Contains(err.Error(), pw) {
			t.Errorf("error shows the password: %v", err)
		}
	}
	if d := describePostgres(specs[0]); strings.Contains(d, pw) || !strings.Contains(d, "127.0.0.1:1/db") {
		t.Errorf("describePostgres = %q", d)
	}
	if d := describePostgres(specs[2]); strings.Contains(d, pw) {
		t.Errorf("describePostgres = %q", d)
	}
	err := scrub(errors.New("x "+pw+" y"), []string{pw})
	if strings.Contains(err.Error(), pw) {
		t.Errorf("scrub kept the secret: %v", err)
	}
}

// FuzzParsePointer: any input either fails with ErrCorrupt or gives a
// pointer that encodes and parses back to itself.
func FuzzParsePointer(f *testing.F) {
	f.Add([]byte(`{"format-version":1,"name":"docs","version":7,"metadata-location":"metadata/a.json",` +
		`"source-table":{"provider":"parquet","properties":{"location":"s3://b/t/"}},"updated-at-ms":1,"write-id":"x"}`))
	f.Add([]byte(`{"format-version":1,"name":"docs","version":7,"dropped":true,"updated-at-ms":1,"write-id":"x"}`))
	f.Add([]byte(`{"format-version":1,"name":"docs","version":7,"dropped":true} {}`))
	f.Add([]byte(`{"format-version":2,"name":"docs","version":7}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := parsePointer("docs", 7, data)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		again, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		q, err := parsePointer("docs", 7, again)
		if err != nil || !reflect.DeepEqual(p, q) {
			t.Fatalf("round trip: %v\n%+v\n%+v", err, p, q)
		}
	})
}
