package source

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/parqdb/parqdb/storage"
)

// OpenLocation opens the source table at loc — a local Parquet file or
// folder (path or file:// URL) or an s3://bucket/key location — and returns
// it with loc in canonical form: an absolute local path, or the s3 URL, with
// a trailing '/' for a folder. The canonical form is what metadata records
// as the source-table location.
func OpenLocation(ctx context.Context, loc string) (*Table, string, error) {
	bucket, prefix, canon, err := splitSource(loc)
	if err != nil {
		return nil, "", err
	}
	b, err := storage.Open(ctx, bucket)
	if err != nil {
		return nil, "", fmt.Errorf("source %s: %w", loc, err)
	}
	t, err := Open(ctx, b, prefix)
	if err != nil {
		return nil, "", fmt.Errorf("source %s: %w", loc, err)
	}
	return t, canon, nil
}

// splitSource splits a source location into the bucket to open, the prefix
// inside it and the canonical location.
func splitSource(loc string) (bucket, prefix, canon string, err error) {
	if loc == "" {
		return "", "", "", fmt.Errorf("source location is empty")
	}
	if strings.HasPrefix(loc, "s3://") {
		u, err := url.Parse(loc)
		if err != nil || u.Host == "" {
			return "", "", "", fmt.Errorf("source %q: not an s3://bucket/key location", loc)
		}
		return "s3://" + u.Host, strings.TrimPrefix(u.Path, "/"), loc, nil
	}
	path := loc
	if strings.HasPrefix(loc, "file://") {
		u, err := url.Parse(loc)
		if err != nil {
			return "", "", "", fmt.Errorf("source %q: %w", loc, err)
		}
		path = u.Path
	} else if strings.Contains(loc, "://") {
		return "", "", "", fmt.Errorf("source %q: unsupported scheme (use a local path, file:// or s3://)", loc)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", "", "", fmt.Errorf("source %q: %w", loc, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", "", "", fmt.Errorf("source %q: %w", loc, err)
	}
	if fi.IsDir() {
		return abs, "", abs + "/", nil
	}
	return filepath.Dir(abs), filepath.Base(abs), abs, nil
}
