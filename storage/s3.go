package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/parqdb/parqdb/location"
)

// S3 is a warehouse in an S3-compatible bucket, below an optional key
// prefix. All methods are safe for concurrent use.
//
// Atomicity: a Writer buffers up to the part size in memory and stores the
// object with one PutObject on Close, or, for larger objects, with a
// multipart upload that becomes visible only when it completes; Abort or a
// failed Close aborts the upload. PutIfAbsent is a PutObject with
// "If-None-Match: *"; the answers PreconditionFailed (412) and
// ConditionalRequestConflict (409, a concurrent conditional write) mean the
// race was lost and are reported as ErrExist.
type S3 struct {
	client   *s3.Client
	bucket   string
	prefix   string // "" or ending in '/'
	partSize int64
	name     string
	// checksums: multipart uploads declare CRC32 part checksums, as the
	// SDK's transfer manager does, unless the configuration asks for
	// checksums only where required (AWS_REQUEST_CHECKSUM_CALCULATION).
	checksums bool
}

var _ Bucket = (*S3)(nil)

// DefaultPartSize is the size above which an S3 Writer switches to a
// multipart upload, and the size of its parts.
const DefaultPartSize = 64 << 20

// MinPartSize is the smallest part size S3 accepts.
const MinPartSize = 5 << 20

// S3Option configures NewS3.
type S3Option func(*s3Options) error

type s3Options struct {
	endpoint          string
	region            string
	accessKey, secret string
	partSize          int64
	httpClient        aws.HTTPClient
}

// S3HTTPClient sets the HTTP client the SDK sends requests with (for
// proxies, custom TLS, or tests that inject transport failures).
func S3HTTPClient(c aws.HTTPClient) S3Option {
	return func(o *s3Options) error {
		if c == nil {
			return errors.New("nil HTTP client")
		}
		o.httpClient = c
		return nil
	}
}

// S3Endpoint sets the server's base URL (for example
// "http://127.0.0.1:9000"), overriding AWS_ENDPOINT_URL_S3 and
// AWS_ENDPOINT_URL. With an endpoint set, requests use path-style
// addressing.
func S3Endpoint(url string) S3Option {
	return func(o *s3Options) error {
		if url == "" {
			return errors.New("empty endpoint")
		}
		o.endpoint = url
		return nil
	}
}

// S3Region sets the region, overriding AWS_REGION.
func S3Region(region string) S3Option {
	return func(o *s3Options) error {
		if region == "" {
			return errors.New("empty region")
		}
		o.region = region
		return nil
	}
}

// S3Credentials sets static credentials, overriding the environment and
// the AWS configuration files. They are never shown in errors or String.
func S3Credentials(accessKey, secretKey string) S3Option {
	return func(o *s3Options) error {
		if accessKey == "" || secretKey == "" {
			return errors.New("empty access key or secret key")
		}
		o.accessKey, o.secret = accessKey, secretKey
		return nil
	}
}

// S3PartSize sets the multipart threshold and part size of Writers
// (default DefaultPartSize, at least MinPartSize). A Writer holds up to
// one part in memory.
func S3PartSize(n int64) S3Option {
	return func(o *s3Options) error {
		if n < MinPartSize {
			return fmt.Errorf("part size %d is below the S3 minimum %d", n, MinPartSize)
		}
		o.partSize = n
		return nil
	}
}

// NewS3 opens bucket, below prefix ("" for the whole bucket; otherwise a
// valid location, with or without a trailing '/'), as a Bucket. The
// configuration comes from the AWS environment and configuration files
// (config.LoadDefaultConfig: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
// AWS_SESSION_TOKEN, AWS_PROFILE, AWS_REGION, AWS_ENDPOINT_URL_S3,
// AWS_ENDPOINT_URL, ...) unless opts override it. Without any region the
// region is us-east-1. NewS3 does no network I/O.
func NewS3(ctx context.Context, bucket, prefix string, opts ...S3Option) (*S3, error) {
	if bucket == "" || strings.ContainsAny(bucket, "/\\:") {
		return nil, fmt.Errorf("warehouse s3://%s: invalid bucket name", bucket)
	}
	if prefix != "" {
		if err := location.Check(prefix); err != nil {
			return nil, fmt.Errorf("warehouse s3://%s: prefix: %w", bucket, err)
		}
		if !strings.HasSuffix(prefix, "/") {
			prefix += "/"
		}
	}
	name := "s3://" + bucket + "/" + prefix
	o := s3Options{partSize: DefaultPartSize}
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, fmt.Errorf("warehouse %s: %w", name, err)
		}
	}
	var loadOpts []func(*config.LoadOptions) error
	if o.region != "" {
		loadOpts = append(loadOpts, config.WithRegion(o.region))
	}
	if o.accessKey != "" {
		loadOpts = append(loadOpts, config.WithCredentialsProvider(
			credentials.NewStaticCredentialsProvider(o.accessKey, o.secret, "")))
	}
	cfg, err := config.LoadDefaultConfig(ctx, loadOpts...)
	if err != nil {
		return nil, fmt.Errorf("warehouse %s: load the AWS configuration: %w", name, err)
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	client := s3.NewFromConfig(cfg, func(so *s3.Options) {
		if o.endpoint != "" {
			so.BaseEndpoint = aws.String(o.endpoint)
		}
		if o.httpClient != nil {
			so.HTTPClient = o.httpClient
		}
		// S3-compatible servers rarely have per-bucket host names.
		if so.BaseEndpoint != nil {
			so.UsePathStyle = true
		}
		// Ranged GETs carry no whole-object checksum; without this the SDK
		// logs a line for every read.
		so.DisableLogOutputChecksumValidationSkipped = true
	})
	return &S3{
		client:    client,
		bucket:    bucket,
		prefix:    prefix,
		partSize:  o.partSize,
		name:      name,
		checksums: cfg.RequestChecksumCalculation != aws.RequestChecksumCalculationWhenRequired,
	}, nil
}

// Bucket returns the bucket name.
func (s *S3) Bucket() string { return s.bucket }

// Prefix returns the key prefix ("" or ending in '/').
func (s *S3) Prefix() string { return s.prefix }

// String returns "s3://bucket/prefix"; it never holds credentials or the
// endpoint.
func (s *S3) String() string { return s.name }

func (s *S3) fail(op, key string, err error) error {
	if s3NotFound(err) {
		err = ErrNotExist
	}
	return &Error{Op: op, Key: key, Bucket: s.name, Err: err}
}

func (s *S3) begin(ctx context.Context, op, key string) error {
	if err := keyError(op, s.name, key); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return &Error{Op: op, Key: key, Bucket: s.name, Err: err}
	}
	return nil
}

func s3Code(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

func s3Status(err error) int {
	var re *smithyhttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

// s3NotFound reports a missing object. NoSuchBucket is not one: a missing
// bucket is a configuration problem and keeps its own message.
func s3NotFound(err error) bool {
	var nsk *types.NoSuchKey
	var nf *types.NotFound
	if errors.As(err, &nsk) || errors.As(err, &nf) {
		return true
	}
	switch s3Code(err) {
	case "NoSuchKey", "NotFound":
		return true
	}
	return false
}

// s3Lost reports a lost conditional write.
func s3Lost(err error) bool {
	switch s3Code(err) {
	case "PreconditionFailed", "ConditionalRequestConflict":
		return true
	}
	return s3Status(err) == http.StatusPreconditionFailed
}

// Open reads the object's size and ETag with one HEAD request. Each ReadAt
// is one ranged GET, conditional on that ETag, so that a replaced object is
// reported rather than mixed. The Object outlives the call that opened it
// (indexes keep their files open across requests): ReadAt uses ctx's values
// but not its cancellation.
func (s *S3) Open(ctx context.Context, key string) (Object, error) {
	if err := s.begin(ctx, "open", key); err != nil {
		return nil, err
	}
	out, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{
		Bucket: aws.String(s.bucket),
		Key:    aws.String(s.prefix + key),
	})
	if err != nil {
		return nil, s.fail("open", key, err)
	}
	return &s3Object{ctx: context.WithoutCancel(ctx), s: s, key: key, size: aws.ToInt64(out.ContentLength), etag: aws.ToString(out.ETag)}, nil
}

type s3Object struct {
	ctx  context.Context
	s    *S3
	key  string
	size int64
	etag string
}

func (o *s3Object) Size() int64  { return o.size }
func (o *s3Object) Close() error { return nil }

// ReadAt follows io.ReaderAt: a read that reaches the end of the object
// returns io.EOF with the bytes it got.
func (o *s3Object) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, &Error{Op: "read", Key: o.key, Bucket: o.s.name, Err: fmt.Errorf("negative offset %d", off)}
	}
	if len(p) == 0 {
		return 0, nil
	}
	if off >= o.size {
		return 0, io.EOF
	}
	want := min(int64(len(p)), o.size-off)
	in := &s3.GetObjectInput{
		Bucket: aws.String(o.s.bucket),
		Key:    aws.String(o.s.prefix + o.key),
		Range:  aws.String(fmt.Sprintf("bytes=%d-%d", off, off+want-1)),
	}
	if o.etag != "" {
		in.IfMatch = aws.String(o.etag)
	}
	out, err := o.s.client.GetObject(o.ctx, in)
	if err != nil {
		if s3Lost(err) {
			err = fmt.Errorf("%w: %w", ErrChanged, err)
		}
		return 0, o.s.fail("read", o.key, err)
	}
	defer out.Body.Close()
	n, err := io.ReadFull(out.Body, p[:want])
	if err != nil {
		return n, o.s.fail("read", o.key, fmt.Errorf("bytes %d-%d: %w", off, off+want-1, err))
	}
	if want < int64(len(p)) {
		return n, io.EOF
	}
	return n, nil
}

// Stat is one HEAD request.
func (s *S3) Stat(ctx context.Context, key string) (Info, error) {
	if err := s.begin(ctx, "stat", key); err != nil {
		return Info{}, err
	}
	out, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{
		Bucket: aws.String(s.bucket),
		Key:    aws.String(s.prefix + key),
	})
	if err != nil {
		return Info{}, s.fail("stat", key, err)
	}
	return Info{
		Key:     key,
		Size:    aws.ToInt64(out.ContentLength),
		ModTime: aws.ToTime(out.LastModified),
		ETag:    aws.ToString(out.ETag),
	}, nil
}

// Create returns a Writer that uploads on Close (see S3). ctx must stay
// valid until Close or Abort returns.
func (s *S3) Create(ctx context.Context, key string) (Writer, error) {
	if err := s.begin(ctx, "create", key); err != nil {
		return nil, err
	}
	return &s3Writer{ctx: ctx, s: s, key: key}, nil
}

// s3Writer buffers one part. Abort after a successful Close does nothing,
// so `defer w.Abort()` is a safe cleanup.
type s3Writer struct {
	ctx context.Context
	s   *S3
	key string

	mu       sync.Mutex
	buf      []byte
	uploadID string // set once a multipart upload started
	parts    []types.CompletedPart
	closed   bool
	err      error // first failure; the upload is aborted
}

func (w *s3Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return 0, &Error{Op: "write", Key: w.key, Bucket: w.s.name, Err: ErrClosed}
	}
	if w.err != nil {
		return 0, w.err
	}
	n := 0
	for len(p) > 0 {
		room := int(w.s.partSize) - len(w.buf)
		if room == 0 {
			if err := w.flushPart(); err != nil {
				w.err = w.s.fail("write", w.key, err)
				w.abortUpload()
				return n, w.err
			}
			continue
		}
		k := min(room, len(p))
		if w.buf == nil {
			w.buf = make([]byte, 0, min(int(w.s.partSize), max(len(p), 64<<10)))
		}
		w.buf = append(w.buf, p[:k]...)
		p = p[k:]
		n += k
	}
	return n, nil
}

// flushPart uploads the buffer as the next part, starting the multipart
// upload if needed.
func (w *s3Writer) flushPart() error {
	if w.uploadID == "" {
		in := &s3.CreateMultipartUploadInput{
			Bucket: aws.String(w.s.bucket),
			Key:    aws.String(w.s.prefix + w.key),
		}
		if w.s.checksums {
			in.ChecksumAlgorithm = types.ChecksumAlgorithmCrc32
		}
		out, err := w.s.client.CreateMultipartUpload(w.ctx, in)
		if err != nil {
			return err
		}
		w.uploadID = aws.ToString(out.UploadId)
	}
	num := int32(len(w.parts) + 1)
	in := &s3.UploadPartInput{
		Bucket:        aws.String(w.s.bucket),
		Key:           aws.String(w.s.prefix + w.key),
		UploadId:      aws.String(w.uploadID),
		PartNumber:    aws.Int32(num),
		Body:          bytes.NewReader(w.buf),
		ContentLength: aws.Int64(int64(len(w.buf))),
	}
	if w.s.checksums {
		in.ChecksumAlgorithm = types.ChecksumAlgorithmCrc32
	}
	out, err := w.s.client.UploadPart(w.ctx, in)
	if err != nil {
		return err
	}
	w.parts = append(w.parts, types.CompletedPart{ETag: out.ETag, PartNumber: aws.Int32(num), ChecksumCRC32: out.ChecksumCRC32})
	w.buf = w.buf[:0]
	return nil
}

// abortUpload drops a started multipart upload, with its own context so
// that a cancelled ctx still cleans up.
func (w *s3Writer) abortUpload() {
	if w.uploadID == "" {
		return
	}
	_, _ = w.s.client.AbortMultipartUpload(context.WithoutCancel(w.ctx), &s3.AbortMultipartUploadInput{
		Bucket:   aws.String(w.s.bucket),
		Key:      aws.String(w.s.prefix + w.key),
		UploadId: aws.String(w.uploadID),
	})
	w.uploadID = ""
}

func (w *s3Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return &Error{Op: "close", Key: w.key, Bucket: w.s.name, Err: ErrClosed}
	}
	w.closed = true
	defer func() { w.buf = nil }()
	if w.err != nil {
		return w.err
	}
	if w.uploadID == "" {
		_, err := w.s.client.PutObject(w.ctx, &s3.PutObjectInput{
			Bucket:        aws.String(w.s.bucket),
			Key:           aws.String(w.s.prefix + w.key),
			Body:          bytes.NewReader(w.buf),
			ContentLength: aws.Int64(int64(len(w.buf))),
		})
		if err != nil {
			return w.s.fail("close", w.key, err)
		}
		return nil
	}
	if len(w.buf) > 0 {
		if err := w.flushPart(); err != nil {
			w.abortUpload()
			return w.s.fail("close", w.key, err)
		}
	}
	_, err := w.s.client.CompleteMultipartUpload(w.ctx, &s3.CompleteMultipartUploadInput{
		Bucket:          aws.String(w.s.bucket),
		Key:             aws.String(w.s.prefix + w.key),
		UploadId:        aws.String(w.uploadID),
		MultipartUpload: &types.CompletedMultipartUpload{Parts: w.parts},
	})
	if err != nil {
		w.abortUpload()
		return w.s.fail("close", w.key, err)
	}
	w.uploadID = ""
	return nil
}

func (w *s3Writer) Abort() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	w.buf = nil
	w.abortUpload()
	return nil
}

// PutIfAbsent is one PutObject with "If-None-Match: *".
//
// The SDK retries a request whose answer was lost (a reset connection, a
// 5xx). If such a retry is refused because the key exists, the refusal may
// be the echo of our own earlier attempt, so PutIfAbsent reads the object:
// when it holds exactly data, the put counts as won. Without a retry a
// refusal is always a loss.
func (s *S3) PutIfAbsent(ctx context.Context, key string, data []byte) error {
	const op = "put-if-absent"
	if err := s.begin(ctx, op, key); err != nil {
		return err
	}
	var retried atomic.Bool
	_, err := s.client.PutObject(ctx, &s3.PutObjectInput{
		Bucket:        aws.String(s.bucket),
		Key:           aws.String(s.prefix + key),
		Body:          bytes.NewReader(data),
		ContentLength: aws.Int64(int64(len(data))),
		IfNoneMatch:   aws.String("*"),
	}, func(o *s3.Options) {
		o.Retryer = recordRetries{Retryer: o.Retryer, retried: &retried}
	})
	if err == nil {
		return nil
	}
	if !s3Lost(err) {
		return s.fail(op, key, err)
	}
	if retried.Load() {
		got, rerr := ReadAll(ctx, s, key)
		if rerr != nil {
			return s.fail(op, key, fmt.Errorf("outcome unknown: a retried put was refused and the object cannot be read: %w", rerr))
		}
		if bytes.Equal(got, data) {
			return nil
		}
	}
	return &Error{Op: op, Key: key, Bucket: s.name, Err: ErrExist}
}

// recordRetries notes whether the SDK decided to retry a request.
type recordRetries struct {
	aws.Retryer
	retried *atomic.Bool
}

func (r recordRetries) IsErrorRetryable(err error) bool {
	ok := r.Retryer.IsErrorRetryable(err)
	if ok {
		r.retried.Store(true)
	}
	return ok
}

func (r recordRetries) GetAttemptToken(ctx context.Context) (func(error) error, error) {
	if v2, ok := r.Retryer.(aws.RetryerV2); ok {
		return v2.GetAttemptToken(ctx)
	}
	return r.GetInitialToken(), nil
}

// Delete is one DeleteObject; S3 answers success for a missing key.
func (s *S3) Delete(ctx context.Context, key string) error {
	if err := s.begin(ctx, "delete", key); err != nil {
		return err
	}
	_, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{
		Bucket: aws.String(s.bucket),
		Key:    aws.String(s.prefix + key),
	})
	if err != nil && !s3NotFound(err) {
		return s.fail("delete", key, err)
	}
	return nil
}

// List pages through ListObjectsV2 (1,000 keys per request). S3 lists in
// byte order of the full key, which is key order. Keys that are not valid
// keys (for example "folder markers" ending in '/') are skipped.
func (s *S3) List(ctx context.Context, prefix string) ([]Info, error) {
	const op = "list"
	if err := CheckPrefix(prefix); err != nil {
		return nil, &Error{Op: op, Key: prefix, Bucket: s.name, Err: err}
	}
	if err := ctx.Err(); err != nil {
		return nil, &Error{Op: op, Key: prefix, Bucket: s.name, Err: err}
	}
	p := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{
		Bucket: aws.String(s.bucket),
		Prefix: aws.String(s.prefix + prefix),
	})
	var infos []Info
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, &Error{Op: op, Key: prefix, Bucket: s.name, Err: err}
		}
		for _, obj := range page.Contents {
			key, ok := strings.CutPrefix(aws.ToString(obj.Key), s.prefix)
			if !ok || CheckKey(key) != nil {
				continue
			}
			infos = append(infos, Info{
				Key:     key,
				Size:    aws.ToInt64(obj.Size),
				ModTime: aws.ToTime(obj.LastModified),
				ETag:    aws.ToString(obj.ETag),
			})
		}
	}
	return infos, nil
}
