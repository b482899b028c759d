package storage

import (
	"strings"

	"github.com/parqdb/parqdb/location"
)

// CheckKey reports whether key can name an object: it must pass
// location.Check and must not end in '/' (that names a folder, which is not
// an object). The error wraps location.ErrInvalid and names the key.
func CheckKey(key string) error {
	if err := location.Check(key); err != nil {
		return err
	}
	if strings.HasSuffix(key, "/") {
		return &location.Error{Location: key, Rule: "ends with '/' (a folder, not an object)"}
	}
	return nil
}

// CheckPrefix reports whether prefix can be given to List: the empty prefix
// (the whole bucket) or one that passes location.Check. A prefix need not
// end at a '/': "data/part-" lists "data/part-0.parquet".
func CheckPrefix(prefix string) error {
	if prefix == "" {
		return nil
	}
	return location.Check(prefix)
}

// keyError returns the *Error for a key that fails CheckKey, or nil.
func keyError(op, bucket, key string) error {
	if err := CheckKey(key); err != nil {
		return &Error{Op: op, Key: key, Bucket: bucket, Err: err}
	}
	return nil
}
