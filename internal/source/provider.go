package source

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/storage"
)

// Provider opens the tables of a source-table provider other than the
// parquet provider (a Parquet file or folder, which this package opens
// itself): Apache Iceberg tables, say (internal/icesource). A provider is
// linked into a binary by the package that registers it (Register), so
// that a program that only reads Parquet sources does not carry what the
// others need (iceberg-go, Arrow compute, gRPC…); the core looks it up by
// the provider name a snapshot's source-table records (Lookup) or by the
// scheme of a location a build is given (LookupLocation).
//
// A Provider is safe for concurrent use. The properties it is given are
// never modified.
type Provider interface {
	// Scheme is the prefix of the locations that name this provider's
	// tables to a build (iceberg://).
	Scheme() string
	// OpenLocation opens the current state of the table loc names and
	// returns its canonical location. The table's Definition is this
	// provider's source-table definition of that state.
	OpenLocation(ctx context.Context, loc string) (*Table, string, error)
	// CheckProperties validates the properties of a source-table
	// definition of this provider; errors name the property.
	CheckProperties(props map[string]string) error
	// OpenBound opens the state of the table that checked properties
	// record (the one an index was built from). wrap, when not nil, wraps
	// the bucket the table's files are read from (to count the reads).
	OpenBound(ctx context.Context, props map[string]string, wrap func(storage.Bucket) storage.Bucket) (*Table, error)
	// Version returns the version (an Iceberg snapshot id) that checked
	// properties record.
	Version(props map[string]string) int64
	// CurrentVersion returns the version of the current state of the
	// table that props name, reading only the table's metadata.
	CurrentVersion(ctx context.Context, props map[string]string) (int64, error)
	// Drift bounds the rows that the versions after from (excluded) up to
	// the current one (included) of the table props name changed.
	// ancestor is false when from is not an ancestor of the current
	// version, or the change cannot be bounded.
	Drift(ctx context.Context, props map[string]string, from int64) (changed int64, ancestor bool, err error)
	// IdentityOf computes the table-identity of the state props record
	// from its data files: keys in ascending byte order, sizes and live
	// row counts (source-files.json).
	IdentityOf(props map[string]string, keys []string, sizes, rows []int64) string
	// Identifier returns the catalog identifier of the table props name,
	// or nil when it has none.
	Identifier(props map[string]string) *metadata.TableIdentifier
}

// ErrNotLinked reports a source-table provider that ParqDB has but this
// binary does not link (see Register).
var ErrNotLinked = errors.New("source provider not linked")

// linkable names the providers ParqDB has, each with the package whose
// import links it: the hint of ErrNotLinked.
var linkable = map[string]string{
	"iceberg": "github.com/parqdb/parqdb/iceberg",
}

var registry struct {
	mu sync.RWMutex
	m  map[string]Provider
}

// Register links provider p under name, the source-table provider name
// its definitions record. It is called from the init function of the
// package that links the provider; registering a name twice panics.
func Register(name string, p Provider) {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	if _, dup := registry.m[name]; dup {
		panic("source: provider " + strconv.Quote(name) + " registered twice")
	}
	if registry.m == nil {
		registry.m = map[string]Provider{}
	}
	registry.m[name] = p
}

// Lookup returns the provider registered under name. For a provider
// ParqDB has but this binary does not link it fails with ErrNotLinked,
// naming the package to import; for any other name that is not registered
// (the parquet provider, an unknown one) it returns nil, nil.
func Lookup(name string) (Provider, error) {
	registry.mu.RLock()
	p := registry.m[name]
	registry.mu.RUnlock()
	if p != nil {
		return p, nil
	}
	if pkg, ok := linkable[name]; ok {
		return nil, notLinked(name, pkg)
	}
	return nil, nil
}

// LookupLocation returns the registered provider whose Scheme starts loc.
// A location that starts with "NAME://" for a provider NAME that ParqDB
// has but this binary does not link fails with ErrNotLinked; any other
// location (a Parquet file or folder, local or s3://) gives nil, nil.
func LookupLocation(loc string) (Provider, error) {
	registry.mu.RLock()
	for _, p := range registry.m {
		if strings.HasPrefix(loc, p.Scheme()) {
			registry.mu.RUnlock()
			return p, nil
		}
	}
	registry.mu.RUnlock()
	for name, pkg := range linkable {
		if strings.HasPrefix(loc, name+"://") {
			return nil, notLinked(name, pkg)
		}
	}
	return nil, nil
}

// OpenAny opens the source table at loc with the linked provider whose
// scheme starts it (an iceberg:// table reference: its current snapshot),
// else as Parquet (OpenLocation). It returns the table and the canonical
// location; it is the one way the commands that take a source location
// (index create, refresh, join) open it.
func OpenAny(ctx context.Context, loc string) (*Table, string, error) {
	p, err := LookupLocation(loc)
	if err != nil {
		return nil, "", fmt.Errorf("source %s: %w", loc, err)
	}
	if p != nil {
		return p.OpenLocation(ctx, loc)
	}
	return OpenLocation(ctx, loc)
}

func notLinked(name, pkg string) error { return &notLinkedError{name, pkg} }

// notLinkedError is ErrNotLinked for one provider, saying how to link it.
type notLinkedError struct{ name, pkg string }

func (e *notLinkedError) Error() string {
	return fmt.Sprintf("provider %q is not linked into this binary; import _ %q (the parqdb CLI links it unless built with -tags no%s)", e.name, e.pkg, e.name)
}

func (e *notLinkedError) Is(target error) bool { return target == ErrNotLinked }

// Providers returns the names of the registered providers, sorted.
func Providers() []string {
	registry.mu.RLock()
	defer registry.mu.RUnlock()
	names := make([]string, 0, len(registry.m))
	for n := range registry.m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
