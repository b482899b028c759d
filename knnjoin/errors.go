package knnjoin

import "errors"

var (
	// ErrOptions reports join options that cannot be satisfied (a missing
	// key field, --self over keys of other types, k out of range …).
	ErrOptions = errors.New("invalid join options")
	// ErrInvalid reports a plan, shard manifest or _SUCCESS file that
	// breaks a rule of the format; the error names the file and member.
	ErrInvalid = errors.New("invalid join plan")
	// ErrOutputExists reports an output location that already holds a
	// published join or other visible files.
	ErrOutputExists = errors.New("join output exists")
	// ErrStalePlan reports a plan that no longer matches the query table
	// or the index (a file changed, the snapshot expired).
	ErrStalePlan = errors.New("stale join plan")
	// ErrIncomplete reports a commit before every shard has finished.
	ErrIncomplete = errors.New("join shards missing")
)
