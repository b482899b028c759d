package storage_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parqdb/parqdb/storage"
)

func TestOpenLocal(t *testing.T) {
	base := t.TempDir()
	t.Chdir(base)
	tests := []struct {
		url, dir string
	}{
		{"wh", filepath.Join(base, "wh")},
		{"./rel/wh", filepath.Join(base, "rel", "wh")},
		{filepath.Join(base, "abs"), filepath.Join(base, "abs")},
		{"file://" + filepath.Join(base, "url"), filepath.Join(base, "url")},
		{"file://localhost" + filepath.Join(base, "host"), filepath.Join(base, "host")},
		{"file:" + filepath.Join(base, "oneslash"), filepath.Join(base, "oneslash")},
		{"file://" + filepath.Join(base, "with%20space"), filepath.Join(base, "with space")},
		{"a:b", filepath.Join(base, "a:b")}, // not a URL: no "//"
	}
	for _, tc := range tests {
		t.Run(tc.url, func(t *testing.T) {
			b, err := storage.Open(t.Context(), tc.url)
			if err != nil {
				t.Fatal(err)
			}
			dir, ok := storage.IsLocal(b)
			if !ok || dir != tc.dir {
				t.Fatalf("IsLocal = %q, %v; want %q", dir, ok, tc.dir)
			}
			if fi, err := os.Stat(tc.dir); err != nil || !fi.IsDir() {
				t.Fatalf("folder not created: %v", err)
			}
			if b.String() != tc.dir {
				t.Errorf("String = %q", b.String())
			}
		})
	}
}

func TestOpenS3(t *testing.T) {
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	tests := []struct {
		url, bucket, prefix string
	}{
		{"s3://bkt", "bkt", ""},
		{"s3://bkt/", "bkt", ""},
		{"s3://bkt/wh", "bkt", "wh/"},
		{"s3://bkt/a/b/", "bkt", "a/b/"},
		{"S3://bkt/x", "bkt", "x/"},
	}
	for _, tc := range tests {
		t.Run(tc.url, func(t *testing.T) {
			b, err := storage.Open(t.Context(), tc.url)
			if err != nil {
				t.Fatal(err)
			}
			s, ok := b.(*storage.S3)
			if !ok {
				t.Fatalf("Open returned %T", b)
			}
			if s.Bucket() != tc.bucket || s.Prefix() != tc.prefix {
				t.Fatalf("bucket %q prefix %q, want %q %q", s.Bucket(), s.Prefix(), tc.bucket, tc.prefix)
			}
			if want := "s3://" + tc.bucket + "/" + tc.prefix; s.String() != want {
				t.Errorf("String = %q, want %q", s.String(), want)
			}
		})
	}
}

func TestOpenInvalid(t *testing.T) {
	t.Chdir(t.TempDir())
	tests := []struct {
		url         string
		unsupported bool
	}{
		{"", false},
		{"s3://", false},
		{"s3:///x", false},
		{"s3://b/../x", false},
		{"s3://b//x", false},
		{"file://otherhost/x", false},
		{"file:relative", false},
		{"gs://bucket/x", true},
		{"http://host/x", true},
		{"HTTPS://host/x", true},
		{"az://c/x", true},
	}
	for _, tc := range tests {
		t.Run(tc.url, func(t *testing.T) {
			b, err := storage.Open(t.Context(), tc.url)
			if err == nil {
				t.Fatalf("Open(%q) = %v, want an error", tc.url, b)
			}
			if tc.unsupported != errors.Is(err, storage.ErrUnsupported) {
				t.Errorf("Open(%q) = %v; unsupported scheme: %v", tc.url, err, tc.unsupported)
			}
		})
	}
	entries, _ := os.ReadDir(".")
	if len(entries) != 0 {
		t.Errorf("refused URLs created %d entries in the working folder", len(entries))
	}
}

func TestOpenRedactsCredentials(t *testing.T) {
	const secret = "s3cr3t-value"
	for _, url := range []string{
		"s3://AKIA:" + secret + "@bucket/p",
		"gs://user:" + secret + "@bucket/p",
		"https://user:" + secret + "@host/p",
	} {
		_, err := storage.Open(t.Context(), url)
		if err == nil {
			t.Fatalf("Open(%q) succeeded", url)
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("Open error shows the secret: %v", err)
		}
	}
}
