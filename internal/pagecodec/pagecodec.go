package pagecodec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	_ "unsafe" // go:linkname

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/format"
	"github.com/pierrec/lz4/v4"
)

// MaxUndeclared bounds a decompression whose caller gives no size (a nil
// or empty destination), such as parquet-go's gzip-compressed bloom
// filters.
const MaxUndeclared = 128 << 20

// codecTable is parquet-go's table of codecs indexed by format code, which
// parquet.LookupCompressionCodec reads for every column it opens. Its
// length is that of parquet-go v0.32.0's table (format.Lz4Raw + 1).
//
//go:linkname codecTable github.com/parquet-go/parquet-go.compressionCodecs
var codecTable [format.Lz4Raw + 1]compress.Codec

// decoders are the bounded decoders by format code.
var decoders = map[format.CompressionCodec]func(dst, src []byte, limit int) ([]byte, error){
	format.Snappy: decodeSnappy,
	format.Gzip:   decodeGzip,
	format.Brotli: decodeBrotli,
	format.Zstd:   decodeZstd,
	format.Lz4Raw: decodeLZ4Raw,
}

func init() {
	for code, decode := range decoders {
		orig := codecTable[code]
		// Replace only what parquet-go itself put there: if an upgrade
		// moved the table, leave it alone and let TestInstalled fail.
		if orig == nil || orig != parquet.LookupCompressionCodec(code) || orig.CompressionCodec() != code {
			continue
		}
		codecTable[code] = &bounded{Codec: orig, decode: decode}
	}
}

// bounded is a parquet-go codec whose Decode writes at most len(dst)
// bytes (MaxUndeclared when dst is empty). Encode, String and
// CompressionCodec are the wrapped codec's.
type bounded struct {
	compress.Codec
	decode func(dst, src []byte, limit int) ([]byte, error)
}

// Decode implements compress.Codec. parquet-go passes a dst whose length
// is the page's uncompressed_page_size; the result never exceeds it.
func (b *bounded) Decode(dst, src []byte) ([]byte, error) {
	limit := len(dst)
	if limit == 0 {
		limit = MaxUndeclared
	}
	out, err := b.decode(dst, src, limit)
	if err != nil {
		return dst[:0], fmt.Errorf("%s: %w", b.Codec, err)
	}
	return out, nil
}

// reserve returns a slice of length n, reusing dst's memory when it can.
func reserve(dst []byte, n int) []byte {
	if cap(dst) >= n {
		return dst[:n]
	}
	return make([]byte, n)
}

func oversize(limit int) error {
	return fmt.Errorf("%w (%d bytes)", ErrOversize, limit)
}

func decodeLZ4Raw(dst, src []byte, limit int) ([]byte, error) {
	// An LZ4 block does not record its decoded size, and the decoder fails
	// the same way on corrupt input and on a too small buffer: one attempt
	// into exactly the declared size decides both.
	dst = reserve(dst, limit)
	n, err := lz4.UncompressBlock(src, dst)
	if err != nil {
		return nil, fmt.Errorf("%w (%d bytes), or corrupt: %v", ErrOversize, limit, err)
	}
	return dst[:n], nil
}

func decodeSnappy(dst, src []byte, limit int) ([]byte, error) {
	n, err := snappy.DecodedLen(src)
	if err != nil {
		return nil, err
	}
	if n > limit {
		return nil, fmt.Errorf("%w: header says %d bytes, page %d", ErrOversize, n, limit)
	}
	return snappy.Decode(reserve(dst, n), src)
}

// zstdDecoder decodes into at most cap(dst) bytes (WithDecodeAllCapLimit);
// DecodeAll is safe for concurrent use.
var zstdDecoder = sync.OnceValues(func() (*zstd.Decoder, error) {
	return zstd.NewReader(nil,
		zstd.WithDecodeAllCapLimit(true),
		zstd.WithDecoderConcurrency(0),
		zstd.WithDecoderMaxMemory(1<<31), // the cap limit is what binds,
	)
})

func decodeZstd(dst, src []byte, limit int) ([]byte, error) {
	d, err := zstdDecoder()
	if err != nil {
		return nil, err
	}
	out, err := d.DecodeAll(src, reserve(dst, limit)[:0:limit])
	if errors.Is(err, zstd.ErrDecoderSizeExceeded) {
		return nil, oversize(limit)
	}
	return out, err
}

var gzipReaders sync.Pool // of *gzip.Reader

func decodeGzip(dst, src []byte, limit int) ([]byte, error) {
	r, _ := gzipReaders.Get().(*gzip.Reader)
	var err error
	if r == nil {
		r, err = gzip.NewReader(bytes.NewReader(src))
	} else {
		err = r.Reset(bytes.NewReader(src))
	}
	if err != nil {
		return nil, err
	}
	defer gzipReaders.Put(r)
	return readBounded(r, dst, limit)
}

var brotliReaders sync.Pool // of *brotli.Reader

func decodeBrotli(dst, src []byte, limit int) ([]byte, error) {
	r, _ := brotliReaders.Get().(*brotli.Reader)
	if r == nil {
		r = brotli.NewReader(bytes.NewReader(src))
	} else if err := r.Reset(bytes.NewReader(src)); err != nil {
		return nil, err
	}
	defer brotliReaders.Put(r)
	return readBounded(r, dst, limit)
}

// readBounded reads r to its end into dst's memory, failing with
// ErrOversize as soon as it yields more than limit bytes.
func readBounded(r io.Reader, dst []byte, limit int) ([]byte, error) {
	buf := reserve(dst, limit)
	n, idle := 0, 0
	for {
		var k int
		var err error
		if n < limit {
			k, err = r.Read(buf[n:])
			n += k
		} else {
			var probe [1]byte
			if k, err = r.Read(probe[:]); k > 0 {
				return nil, oversize(limit)
			}
		}
		switch {
		case err == io.EOF:
			return buf[:n], nil
		case err != nil:
			return nil, err
		case k == 0:
			if idle++; idle > 100 {
				return nil, io.ErrNoProgress
			}
		default:
			idle = 0
		}
	}
}
