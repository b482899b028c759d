package buildplan

import "errors"

// ErrInvalid reports a plan or shard manifest that breaks a rule of the
// format; the error names the file and the member.
var ErrInvalid = errors.New("invalid build plan")
