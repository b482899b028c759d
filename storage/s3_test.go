package storage_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/parqdb/parqdb/internal/testenv"
	"github.com/parqdb/parqdb/location"
	"github.com/parqdb/parqdb/storage"
	"github.com/parqdb/parqdb/storage/storagetest"
)

// newS3 returns a bucket on the test server in a fresh S3 bucket, below
// prefix, with the minimum part size so that multipart uploads are tested.
func newS3(t testing.TB, prefix string, opts ...storage.S3Option) *storage.S3 {
	t.Helper()
	srv := testenv.S3(t)
	base := []storage.S3Option{
		storage.S3Endpoint(srv.Endpoint),
		storage.S3Region(srv.Region),
		storage.S3Credentials(srv.AccessKey, srv.SecretKey),
		storage.S3PartSize(storage.MinPartSize),
	}
	s, err := storage.NewS3(t.Context(), srv.NewBucket(t), prefix, append(base, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestS3(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Bucket { return newS3(t, "") })
}

func TestS3Prefix(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Bucket { return newS3(t, "wh/main") })
}

// TestS3PrefixIsolation checks that a prefixed bucket sees only its keys.
func TestS3PrefixIsolation(t *testing.T) {
	ctx := t.Context()
	whole := newS3(t, "")
	inner, err := storage.NewS3(ctx, whole.Bucket(), "p/", s3Opts(t)...)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"p/a", "p/b/c", "pa", "q/p/a"} {
		if err := storage.WriteAll(ctx, whole, k, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	infos, err := inner.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, in := range infos {
		got = append(got, in.Key)
	}
	if strings.Join(got, ",") != "a,b/c" {
		t.Fatalf("List = %q, want [a b/c]", got)
	}
	data, err := storage.ReadAll(ctx, inner, "b/c")
	if err != nil || string(data) != "p/b/c" {
		t.Fatalf("ReadAll(b/c) = %q, %v", data, err)
	}
	if inner.String() != "s3://"+whole.Bucket()+"/p/" {
		t.Errorf("String = %q", inner.String())
	}
}

func s3Opts(t testing.TB) []storage.S3Option {
	srv := testenv.S3(t)
	return []storage.S3Option{
		storage.S3Endpoint(srv.Endpoint),
		storage.S3Region(srv.Region),
		storage.S3Credentials(srv.AccessKey, srv.SecretKey),
	}
}

// TestS3SecretsNotInErrors forces authentication failures with known
// credentials and checks that no error text shows them.
func TestS3SecretsNotInErrors(t *testing.T) {
	const access, secret = "AKIAPARQDBTESTKEY", "parqdb-secret-do-not-print-9f8e7d"
	srv := testenv.S3(t)
	bucket := srv.NewBucket(t)
	ctx := t.Context()
	tests := []struct {
		name string
		opts []storage.S3Option
	}{
		{"wrong secret", []storage.S3Option{storage.S3Endpoint(srv.Endpoint), storage.S3Region(srv.Region),
			storage.S3Credentials(srv.AccessKey, secret)}},
		{"unknown key", []storage.S3Option{storage.S3Endpoint(srv.Endpoint), storage.S3Region(srv.Region),
			storage.S3Credentials(access, secret)}},
		{"unreachable server", []storage.S3Option{storage.S3Endpoint("http://127.0.0.1:1"), storage.S3Region(srv.Region),
			storage.S3Credentials(access, secret)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := storage.NewS3(ctx, bucket, "x", tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			var errs []error
			_, err = s.Open(ctx, "a")
			errs = append(errs, err)
			_, err = s.Stat(ctx, "a")
			errs = append(errs, err)
			errs = append(errs, s.PutIfAbsent(ctx, "a", []byte("x")))
			errs = append(errs, storage.WriteAll(ctx, s, "a", []byte("x")))
			_, err = s.List(ctx, "")
			errs = append(errs, err)
			errs = append(errs, s.Delete(ctx, "a"))
			for i, err := range errs {
				if err == nil {
					t.Fatalf("operation %d succeeded with bad credentials", i)
				}
				if msg := err.Error(); strings.Contains(msg, secret) || strings.Contains(msg, access) {
					t.Errorf("operation %d: error shows a credential: %s", i, msg)
				}
			}
			if str := s.String(); strings.Contains(str, secret) || strings.Contains(str, access) || strings.Contains(str, "127.0.0.1") {
				t.Errorf("String() = %q shows a credential or the endpoint", str)
			}
		})
	}
	// Credentials in the environment and in a URL.
	t.Setenv("AWS_ACCESS_KEY_ID", access)
	t.Setenv("AWS_SECRET_ACCESS_KEY", secret)
	t.Setenv("AWS_ENDPOINT_URL_S3", srv.Endpoint)
	t.Setenv("AWS_REGION", srv.Region)
	b, err := storage.Open(ctx, "s3://"+bucket+"/env")
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Stat(ctx, "a")
	if err == nil || strings.Contains(err.Error(), secret) {
		t.Errorf("Stat with environment credentials: %v", err)
	}
	_, err = storage.Open(ctx, "s3://"+access+":"+secret+"@"+bucket+"/p")
	if err == nil || strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), access) {
		t.Errorf("Open(URL with credentials) = %v", err)
	}
}

// TestS3Environment opens a bucket configured only by the standard AWS
// environment variables.
func TestS3Environment(t *testing.T) {
	srv := testenv.S3(t)
	bucket := srv.NewBucket(t)
	for _, endpointVar := range []string{"AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"} {
		t.Run(endpointVar, func(t *testing.T) {
			t.Setenv("AWS_ACCESS_KEY_ID", srv.AccessKey)
			t.Setenv("AWS_SECRET_ACCESS_KEY", srv.SecretKey)
			t.Setenv("AWS_REGION", srv.Region)
			t.Setenv("AWS_CONFIG_FILE", "/nonexistent")
			t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
			t.Setenv("AWS_ENDPOINT_URL_S3", "")
			t.Setenv("AWS_ENDPOINT_URL", "")
			t.Setenv(endpointVar, srv.Endpoint)
			ctx := t.Context()
			b, err := storage.Open(ctx, "s3://"+bucket+"/"+endpointVar)
			if err != nil {
				t.Fatal(err)
			}
			if err := b.PutIfAbsent(ctx, "k", []byte("v")); err != nil {
				t.Fatal(err)
			}
			if got, err := storage.ReadAll(ctx, b, "k"); err != nil || string(got) != "v" {
				t.Fatalf("ReadAll = %q, %v", got, err)
			}
			if _, ok := storage.IsLocal(b); ok {
				t.Error("IsLocal(s3 bucket) = true")
			}
		})
	}
}

// TestS3KeysRefusedBeforeIO points a bucket at a closed port: refused keys
// must fail with location.ErrInvalid, which proves no request was tried.
func TestS3KeysRefusedBeforeIO(t *testing.T) {
	s, err := storage.NewS3(t.Context(), "b", "", storage.S3Endpoint("http://127.0.0.1:1"),
		storage.S3Region("us-east-1"), storage.S3Credentials("a", "b"))
	if err != nil {
		t.Fatal(err)
	}
	counted, stats := storage.WithStats(s)
	for _, key := range storagetest.BadKeys {
		if err := counted.PutIfAbsent(t.Context(), key, nil); !errors.Is(err, location.ErrInvalid) {
			t.Errorf("PutIfAbsent(%q) = %v, want ErrInvalid", key, err)
		}
		if _, err := counted.Open(t.Context(), key); !errors.Is(err, location.ErrInvalid) {
			t.Errorf("Open(%q) = %v, want ErrInvalid", key, err)
		}
	}
	if got := stats.Snapshot().Requests; got != 0 {
		t.Errorf("Requests = %d, want 0", got)
	}
}

// TestS3ReadChangedObject replaces an object between Open and ReadAt: the
// read must fail rather than mix versions.
func TestS3ReadChangedObject(t *testing.T) {
	s := newS3(t, "")
	ctx := t.Context()
	if err := storage.WriteAll(ctx, s, "k", []byte("version one")); err != nil {
		t.Fatal(err)
	}
	o, err := s.Open(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if err := storage.WriteAll(ctx, s, "k", []byte("version two")); err != nil {
		t.Fatal(err)
	}
	if n, err := o.ReadAt(make([]byte, 4), 0); !errors.Is(err, storage.ErrChanged) {
		t.Fatalf("ReadAt after replacement = %d, %v; want storage.ErrChanged", n, err)
	}
}

func TestNewS3Invalid(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name, bucket, prefix string
		opts                 []storage.S3Option
	}{
		{"empty bucket", "", "", nil},
		{"bucket with slash", "a/b", "", nil},
		{"prefix with dotdot", "b", "../x", nil},
		{"absolute prefix", "b", "/x", nil},
		{"small part size", "b", "", []storage.S3Option{storage.S3PartSize(1 << 20)}},
		{"empty endpoint", "b", "", []storage.S3Option{storage.S3Endpoint("")}},
		{"empty credentials", "b", "", []storage.S3Option{storage.S3Credentials("", "x")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := storage.NewS3(ctx, tc.bucket, tc.prefix, tc.opts...); err == nil {
				t.Fatal("NewS3 succeeded")
			}
		})
	}
}

func BenchmarkS3ReadAt(b *testing.B) {
	storagetest.BenchmarkReadAt(b, newS3(b, ""))
}

// lostAnswer forwards requests to the server but, for the first
// conditional PUT, drops the answer after the server acted on it, as a
// reset connection does. The SDK then retries.
type lostAnswer struct {
	next    *http.Client
	dropped atomic.Bool
}

func (c *lostAnswer) Do(req *http.Request) (*http.Response, error) {
	resp, err := c.next.Do(req)
	if err == nil && req.Method == http.MethodPut && req.Header.Get("If-None-Match") == "*" && c.dropped.CompareAndSwap(false, true) {
		resp.Body.Close()
		return nil, &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
	}
	return resp, err
}

// TestS3PutIfAbsentRetriedAnswer checks that a put whose answer was lost,
// and whose retry is refused because the first attempt stored the object,
// counts as won, while a refusal for someone else's object is a loss.
func TestS3PutIfAbsentRetriedAnswer(t *testing.T) {
	ctx := t.Context()
	plain := newS3(t, "")
	flaky := &lostAnswer{next: &http.Client{}}
	s, err := storage.NewS3(ctx, plain.Bucket(), "", append(s3Opts(t), storage.S3HTTPClient(flaky))...)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutIfAbsent(ctx, "mine", []byte("my data")); err != nil {
		t.Fatalf("PutIfAbsent with a lost answer = %v, want nil", err)
	}
	if !flaky.dropped.Load() {
		t.Fatal("the answer was never dropped: the test tested nothing")
	}
	if got, err := storage.ReadAll(ctx, plain, "mine"); err != nil || string(got) != "my data" {
		t.Fatalf("ReadAll = %q, %v", got, err)
	}
	// Someone else's object at the key: the lost answer and retry must still
	// end in ErrExist.
	flaky.dropped.Store(false)
	if err := plain.PutIfAbsent(ctx, "theirs", []byte("their data")); err != nil {
		t.Fatal(err)
	}
	if err := s.PutIfAbsent(ctx, "theirs", []byte("my data")); !errors.Is(err, storage.ErrExist) {
		t.Fatalf("PutIfAbsent over another's object = %v, want ErrExist", err)
	}
}

// TestS3MultipartChecksumModes writes a three-part object with the SDK's
// default checksums and with checksums only where required (the setting
// for servers that reject the defaults).
func TestS3MultipartChecksumModes(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef"), (2*storage.MinPartSize+777)/16)
	for _, mode := range []string{"", "when_required"} {
		t.Run("mode="+mode, func(t *testing.T) {
			if mode != "" {
				t.Setenv("AWS_REQUEST_CHECKSUM_CALCULATION", mode)
			}
			s := newS3(t, "")
			ctx := t.Context()
			w, err := s.Create(ctx, "big")
			if err != nil {
				t.Fatal(err)
			}
			for rest := data; len(rest) > 0; {
				k := min(len(rest), 3<<20)
				if _, err := w.Write(rest[:k]); err != nil {
					t.Fatal(err)
				}
				rest = rest[k:]
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			got, err := storage.ReadAll(ctx, s, "big")
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("read back %d bytes (%v), want the %d written", len(got), err, len(data))
			}
		})
	}
}

// An index opens its files in one request and reads them in later ones:
// reads must not fail once the opening context is cancelled.
func TestS3ObjectOutlivesOpenContext(t *testing.T) {
	b := newS3(t, "")
	ctx := context.Background()
	if err := storage.WriteAll(ctx, b, "k", []byte("hello world")); err != nil {
		t.Fatal(err)
	}
	octx, cancel := context.WithCancel(ctx)
	o, err := b.Open(octx, "k")
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	cancel()
	buf := make([]byte, 5)
	if _, err := o.ReadAt(buf, 6); err != nil || string(buf) != "world" {
		t.Fatalf("read after the open context ended: %q, %v", buf, err)
	}
}
