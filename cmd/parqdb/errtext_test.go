package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// codeName matches what a user should never have to read in an error: a
// Go identifier (pkg.Func, pkg.Type), a panic guard's wording, or a Go
// package name used as a prefix ("storage: …", "catalog: …").
var codeName = regexp.MustCompile(`\b[a-z][a-z0-9]*\.[A-Z][A-Za-z0-9]*\b|used before|panic|goroutine|` +
	`(^|: )(storage|catalog|ivf|postings|indexer|build|query|artifact|lifecycle|lvq|metadata|source|sqlengine|server): `)

// TestErrorsNameUserInput runs common failing commands and checks that each
// error names what the user gave (file, flag, key, index, column, value)
// and no code identifier.
func TestErrorsNameUserInput(t *testing.T) {
	wh := gloveWarehouse(t)
	dir := t.TempDir()
	badFvecs := filepath.Join(dir, "bad.fvecs")
	badJSON := filepath.Join(dir, "bad.json")
	for f, b := range map[string]string{badFvecs: "abc", badJSON: "[1,2"} {
		if err := os.WriteFile(f, []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	create := []string{"index", "create", "w2", "--source", gloveSample, "--vector-field", "embedding", "--key-fields", "word"}
	for _, tc := range []struct {
		args  []string
		names string // the user's input the message must name
	}{
		{[]string{"index", "create", "w2", "--source", filepath.Join(dir, "nope.parquet"), "--vector-field", "embedding", "--key-fields", "word"}, "nope.parquet"},
		{[]string{"index", "create", "w2", "--source", gloveSample, "--vector-field", "vec", "--key-fields", "word"}, `"vec"`},
		{[]string{"index", "create", "w2", "--source", gloveSample, "--vector-field", "vec", "--key-fields", "word"}, "embedding"}, // the file's fields
		{[]string{"index", "create", "w2", "--source", gloveSample, "--vector-field", "embedding", "--key-fields", "wrod"}, "word"},
		{[]string{"index", "create", "w2", "--source", gloveSample, "--vector-field", "embedding", "--key-fields", "id"}, `"id"`},
		{[]string{"index", "create", "words", "--source", gloveSample, "--vector-field", "embedding", "--key-fields", "word"}, `"words"`},
		{append(create, "--nlist", "20000"), "20000"},
		{append(create, "--metric", "dot"), `"dot"`},
		{[]string{"search", "nope", "--near-key", "king"}, `"nope"`},
		{[]string{"search", "words", "--near-key", "nosuchword"}, "nosuchword"},
		{[]string{"search", "words", "--vector", "[1,2,3]"}, "3 values"},
		{[]string{"search", "words", "--vector", "oops"}, "--vector"},
		{[]string{"search", "words", "--near-key", "king", "--columns", "colour"}, `"colour"`},
		{[]string{"search", "words", "--near-key", "king", "--snapshot", "9"}, "9"},
		{[]string{"search", "words", "--queries", badFvecs}, "bad.fvecs"},
		{[]string{"index", "describe", "nope"}, `no index named "nope"`},
		{[]string{"index", "refresh", "nope"}, "parqdb index list shows the indexes"},
		{[]string{"index", "drop", "nope"}, `"nope"`},
		{[]string{"index", "history", "nope"}, `"nope"`},
		{[]string{"index", "expire", "words"}, "--retain-last"},
		{[]string{"metadata", "validate", badJSON}, "bad.json"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			checkUserError(t, append([]string{"--warehouse", wh}, tc.args...), tc.names)
		})
	}
	// Settings that name no warehouse or catalog.
	for _, tc := range []struct {
		args  []string
		names string
	}{
		{[]string{"--warehouse", "gs://bucket/wh", "index", "list"}, "gs://bucket/wh"},
		{[]string{"--warehouse", "file:relative", "index", "list"}, "file:relative"},
		{[]string{"--warehouse", filepath.Join(dir, "typo"), "index", "list"}, "typo"},
		{[]string{"--warehouse", wh, "--catalog", "sqlite:", "index", "list"}, "sqlite:"},
		{[]string{"--warehouse", wh, "--catalog", "mysql://db", "index", "list"}, "mysql://db"},
		{[]string{"--warehouse", "s3://bucket/wh", "index", "list"}, "--catalog"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) { checkUserError(t, tc.args, tc.names) })
	}
}

func checkUserError(t *testing.T, args []string, names string) {
	t.Helper()
	root, _ := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.Execute()
	code := exitCode(err)
	if err != nil && !errors.Is(err, errSilent) {
		out.WriteString("parqdb: " + withHint(err).Error()) // as run prints it
	}
	msg := out.String()
	if code == exitOK {
		t.Fatalf("exit 0, want a failure:\n%s", msg)
	}
	if !strings.Contains(msg, names) {
		t.Errorf("the message does not name %s:\n%s", names, msg)
	}
	if m := codeName.FindString(msg); m != "" {
		t.Errorf("the message shows code (%q):\n%s", m, msg)
	}
}
