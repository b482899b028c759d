//go:build duckdb

package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-adbc/go/adbc"
	adbcflight "github.com/apache/arrow-adbc/go/adbc/driver/flightsql"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/parqdb/parqdb/internal/testcert"
)

// TestServeFlightTLS: `parqdb serve --flight … --tls-cert … --tls-key …`
// answers the ADBC Flight SQL driver on grpc+tls:// (trusting the test CA,
// with the token), and refuses it on plain grpc:// and without the token.
func TestServeFlightTLS(t *testing.T) {
	wh := cliIndex(t)
	c := testcert.New(t)
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, flight := startServe(t, wh, "--flight", "127.0.0.1:0", "--token-file", tok, "--tls-cert", c.CertFile, "--tls-key", c.KeyFile)
	query := func(uri, token string) (int64, error) {
		opts := map[string]string{adbc.OptionKeyURI: uri, adbcflight.OptionSSLRootCerts: string(c.CAPEM),
			adbcflight.OptionTimeoutQuery: "30"}
		if token != "" {
			opts[adbcflight.OptionAuthorizationHeader] = "Bearer " + token
		}
		db, err := adbcflight.NewDriver(memory.DefaultAllocator).NewDatabase(opts)
		if err != nil {
			return 0, err
		}
		defer db.Close()
		cn, err := db.Open(context.Background())
		if err != nil {
			return 0, err
		}
		defer cn.Close()
		st, err := cn.NewStatement()
		if err != nil {
			return 0, err
		}
		defer st.Close()
		if err := st.SetSqlQuery("SELECT word FROM ivf_search_key('words', 'king', 3)"); err != nil {
			return 0, err
		}
		rr, _, err := st.ExecuteQuery(context.Background())
		if err != nil {
			return 0, err
		}
		defer rr.Release()
		var n int64
		for rr.Next() {
			n += rr.RecordBatch().NumRows()
		}
		return n, rr.Err()
	}
	if n, err := query("grpc+tls://"+flight, "s3cret"); err != nil || n != 3 {
		t.Fatalf("grpc+tls with token: %d rows, %v", n, err)
	}
	if _, err := query("grpc://"+flight, "s3cret"); err == nil {
		t.Fatal("plain grpc:// to a TLS server answered")
	}
	if _, err := query("grpc+tls://"+flight, ""); err == nil {
		t.Fatal("grpc+tls without the token answered")
	}
}
