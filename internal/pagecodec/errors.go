package pagecodec

import "errors"

// ErrOversize reports a compressed page that decompresses to more than its
// declared uncompressed size, or (for LZ4_RAW, whose decoder cannot tell
// the two apart) a block that is corrupt.
var ErrOversize = errors.New("page does not decompress within its declared uncompressed size")
