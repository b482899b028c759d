package storage

import (
	"context"
	"fmt"
	"net/url"
	"strings"
)

// Open opens a warehouse given as
//
//   - a local folder path, relative or absolute ("wh", "/data/wh"), created
//     if missing (NewLocal);
//   - a file URL with an absolute path ("file:///data/wh"; the host must be
//     empty or "localhost"; percent-escapes are decoded);
//   - an S3 URL "s3://bucket" or "s3://bucket/prefix" (NewS3 with the AWS
//     environment).
//
// Any other "scheme://" is refused with an error wrapping ErrUnsupported.
// Errors quote the URL without its user information, so a URL carrying
// credentials does not leak them.
func Open(ctx context.Context, rawURL string) (Bucket, error) {
	if rawURL == "" {
		return nil, fmt.Errorf("empty warehouse location: give a folder or s3://bucket/prefix")
	}
	scheme, rest, isURL := splitScheme(rawURL)
	if !isURL {
		return NewLocal(rawURL)
	}
	switch strings.ToLower(scheme) {
	case "file":
		u, err := url.Parse(rawURL)
		if err != nil {
			return nil, fmt.Errorf("warehouse %q: %w", redactURL(rawURL), err)
		}
		if u.Host != "" && u.Host != "localhost" {
			return nil, fmt.Errorf("warehouse %q: file URL with host %q: only local files are supported", redactURL(rawURL), u.Host)
		}
		if u.Opaque != "" || !strings.HasPrefix(u.Path, "/") {
			return nil, fmt.Errorf("warehouse %q: file URL needs an absolute path (file:///path)", redactURL(rawURL))
		}
		return NewLocal(u.Path)
	case "s3":
		bucket, prefix, _ := strings.Cut(strings.TrimPrefix(rest, "//"), "/")
		if strings.Contains(bucket, "@") {
			return nil, fmt.Errorf("warehouse %q: credentials do not belong in the URL; use the AWS environment", redactURL(rawURL))
		}
		return NewS3(ctx, bucket, prefix)
	default:
		return nil, fmt.Errorf("warehouse %q: %w (want a folder, file:///path or s3://bucket/prefix)", redactURL(rawURL), ErrUnsupported)
	}
}

// splitScheme splits "scheme:rest" when s starts with a URL scheme of two or
// more letters followed by "://", or with "file:". A Windows drive ("C:\x")
// or a relative path containing ':' is not a URL.
func splitScheme(s string) (scheme, rest string, ok bool) {
	i := strings.IndexByte(s, ':')
	if i < 2 {
		return "", "", false
	}
	for j, c := range s[:i] {
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && (j == 0 || !(c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return "", "", false
		}
	}
	scheme, rest = s[:i], s[i+1:]
	if strings.HasPrefix(rest, "//") || strings.EqualFold(scheme, "file") {
		return scheme, rest, true
	}
	return "", "", false
}

// redactURL hides the user information of a URL ("s3://key:secret@b").
func redactURL(s string) string {
	scheme, rest, ok := splitScheme(s)
	if !ok || !strings.HasPrefix(rest, "//") {
		return s
	}
	auth := rest[2:]
	if i := strings.IndexAny(auth, "/?#"); i >= 0 {
		auth = auth[:i]
	}
	if at := strings.LastIndexByte(auth, '@'); at >= 0 {
		return scheme + "://REDACTED@" + rest[2+at+1:]
	}
	return s
}

// IsLocal reports the folder of a local bucket, seeing through the
// wrappers of this package (WithStats, WithFaults).
func IsLocal(b Bucket) (dir string, ok bool) {
	for {
		switch v := b.(type) {
		case *Local:
			return v.Dir(), true
		case interface{ Unwrap() Bucket }:
			b = v.Unwrap()
		default:
			return "", false
		}
	}
}
