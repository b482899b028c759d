// Package pqnode builds Parquet schemas whose fields keep the order they
// are given in (parquet.Group sorts its fields by name), for the files
// ParqDB writes for users: search results and join output.
package pqnode

import (
	"reflect"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/encoding"
)

// Field returns node as a field named name.
func Field(name string, node parquet.Node) parquet.Field { return field{name, node} }

type field struct {
	name string
	parquet.Node
}

func (f field) Name() string                      { return f.name }
func (f field) Value(reflect.Value) reflect.Value { return reflect.Value{} }

// Group returns a required group of fields in the given order; its Go
// type is map[string]any (parquet.GenericWriter[map[string]any] writes it).
func Group(fields ...parquet.Field) parquet.Node { return group(fields) }

type group []parquet.Field

func (g group) ID() int                     { return 0 }
func (g group) String() string              { return "group" }
func (g group) Type() parquet.Type          { return parquet.Group{}.Type() }
func (g group) Optional() bool              { return false }
func (g group) Repeated() bool              { return false }
func (g group) Required() bool              { return true }
func (g group) Leaf() bool                  { return false }
func (g group) Fields() []parquet.Field     { return g }
func (g group) Encoding() encoding.Encoding { return nil }
func (g group) Compression() compress.Codec { return nil }
func (g group) GoType() reflect.Type        { return reflect.TypeFor[map[string]any]() }
