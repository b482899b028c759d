package storage

import (
	"context"
	"errors"
	"io/fs"
	"path"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Leftover is an unfinished write that a writer killed before Close or
// Abort left behind: a temporary file in a local folder, or an S3
// multipart upload never completed. No reader can reach one (it is not a
// key and List never returns it), but it takes space until removed.
type Leftover struct {
	// Name identifies the leftover for messages and RemoveLeftover: the
	// temporary file's folder-relative path, or the upload's object key.
	Name string
	// UploadID is the S3 multipart upload id; empty for a local file.
	UploadID string
	// Size is the bytes the leftover holds where the backend tells
	// (local files); 0 for S3 uploads.
	Size int64
	// Started is when the write began (file modification time, upload
	// initiation time).
	Started time.Time
}

// ListLeftovers returns the unfinished writes below prefix (a CheckPrefix
// prefix) in name order: temporary files named ".parqdb-tmp:…" in the
// folders below prefix.
func (l *Local) ListLeftovers(ctx context.Context, prefix string) ([]Leftover, error) {
	const op = "list-leftovers"
	if err := CheckPrefix(prefix); err != nil {
		return nil, &Error{Op: op, Key: prefix, Bucket: l.dir, Err: err}
	}
	start := "."
	if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
		start = prefix[:i]
	}
	fsys := l.root.FS()
	var out []Leftover
	err := fs.WalkDir(fsys, start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() {
			if dir := p + "/"; p != start && !strings.HasPrefix(dir, prefix) && !strings.HasPrefix(prefix, dir) {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !strings.HasPrefix(path.Base(p), tempPrefix) || !strings.HasPrefix(p, prefix) {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil // vanished: its writer finished or gave up
		}
		out = append(out, Leftover{Name: p, Size: fi.Size(), Started: fi.ModTime()})
		return nil
	})
	if err != nil {
		return nil, &Error{Op: op, Key: prefix, Bucket: l.dir, Err: err}
	}
	return out, nil
}

// RemoveLeftover deletes a temporary file ListLeftovers returned. It
// refuses any other name, so it can never delete a key.
func (l *Local) RemoveLeftover(ctx context.Context, lo Leftover) error {
	const op = "remove-leftover"
	if err := ctx.Err(); err != nil {
		return &Error{Op: op, Key: lo.Name, Bucket: l.dir, Err: err}
	}
	if !strings.HasPrefix(path.Base(lo.Name), tempPrefix) || !fs.ValidPath(lo.Name) {
		return &Error{Op: op, Key: lo.Name, Bucket: l.dir, Err: ErrNotLeftover}
	}
	if err := l.root.Remove(lo.Name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return &Error{Op: op, Key: lo.Name, Bucket: l.dir, Err: err}
	}
	return nil
}

// ListLeftovers returns the multipart uploads below prefix that were
// started and neither completed nor aborted, in key order.
func (s *S3) ListLeftovers(ctx context.Context, prefix string) ([]Leftover, error) {
	const op = "list-leftovers"
	if err := CheckPrefix(prefix); err != nil {
		return nil, &Error{Op: op, Key: prefix, Bucket: s.name, Err: err}
	}
	in := &s3.ListMultipartUploadsInput{
		Bucket: aws.String(s.bucket),
		Prefix: aws.String(s.prefix + prefix),
	}
	var out []Leftover
	for {
		page, err := s.client.ListMultipartUploads(ctx, in)
		if err != nil {
			return nil, &Error{Op: op, Key: prefix, Bucket: s.name, Err: err}
		}
		for _, u := range page.Uploads {
			key, ok := strings.CutPrefix(aws.ToString(u.Key), s.prefix)
			if !ok {
				continue
			}
			out = append(out, Leftover{Name: key, UploadID: aws.ToString(u.UploadId), Started: aws.ToTime(u.Initiated)})
		}
		if !aws.ToBool(page.IsTruncated) {
			return out, nil
		}
		in.KeyMarker, in.UploadIdMarker = page.NextKeyMarker, page.NextUploadIdMarker
	}
}

// RemoveLeftover aborts a multipart upload ListLeftovers returned.
func (s *S3) RemoveLeftover(ctx context.Context, lo Leftover) error {
	const op = "remove-leftover"
	if lo.UploadID == "" {
		return &Error{Op: op, Key: lo.Name, Bucket: s.name, Err: ErrNotLeftover}
	}
	_, err := s.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{
		Bucket:   aws.String(s.bucket),
		Key:      aws.String(s.prefix + lo.Name),
		UploadId: aws.String(lo.UploadID),
	})
	if err != nil {
		return &Error{Op: op, Key: lo.Name, Bucket: s.name, Err: err}
	}
	return nil
}
