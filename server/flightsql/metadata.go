//go:build duckdb

package flightsql

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql/schema_ref"

	"github.com/parqdb/parqdb/internal/version"
)

// Every index appears to Flight SQL clients as a VIEW named after it in
// catalog "parqdb", schema "main". Its columns are those ivf_search
// returns for it (the source columns, then _distance); it is not
// selectable as such: query it with ivf_search('<index>', …).
const (
	catalogName = "parqdb"
	schemaName  = "main"
	tableType   = "VIEW"
)

// registerSqlInfo registers what GetSqlInfo answers: who the server is
// and the facts about its SQL (DuckDB's dialect, read-only, no
// transactions).
func (s *sqlServer) registerSqlInfo() error {
	for id, v := range map[flightsql.SqlInfo]any{
		flightsql.SqlInfoFlightSqlServerName:             "parqdb",
		flightsql.SqlInfoFlightSqlServerVersion:          version.String(),
		flightsql.SqlInfoFlightSqlServerArrowVersion:     arrow.PkgVersion,
		flightsql.SqlInfoFlightSqlServerReadOnly:         true,
		flightsql.SqlInfoFlightSqlServerSql:              true,
		flightsql.SqlInfoFlightSqlServerSubstrait:        false,
		flightsql.SqlInfoFlightSqlServerTransaction:      int32(flightsql.SqlTransactionNone),
		flightsql.SqlInfoFlightSqlServerCancel:           true,
		flightsql.SqlInfoFlightSqlServerBulkIngestion:    false,
		flightsql.SqlInfoFlightSqlServerStatementTimeout: int32(s.srv.Limits().Timeout.Seconds()),
		flightsql.SqlInfoDDLCatalog:                      false,
		flightsql.SqlInfoDDLSchema:                       false,
		flightsql.SqlInfoDDLTable:                        false,
		flightsql.SqlInfoIdentifierCase:                  int64(flightsql.SqlCaseSensitivityCaseInsensitive),
		flightsql.SqlInfoIdentifierQuoteChar:             `"`,
		flightsql.SqlInfoQuotedIdentifierCase:            int64(flightsql.SqlCaseSensitivityCaseInsensitive),
		flightsql.SqlInfoAllTablesAreASelectable:         false,
		flightsql.SqlInfoNullOrdering:                    int64(flightsql.SqlNullOrderingSortAtEnd),
		flightsql.SqlInfoTransactionsSupported:           false,
		flightsql.SqlInfoSupportsColumnAliasing:          true,
		flightsql.SqlInfoNullPlusNullIsNull:              true,
		flightsql.SqlInfoSupportsTableCorrelationNames:   true,
		flightsql.SqlInfoSupportsExpressionsInOrderBy:    true,
		flightsql.SqlInfoSupportsLikeEscapeClause:        true,
		flightsql.SqlInfoCorrelatedSubqueriesSupported:   true,
		flightsql.SqlInfoSchemaTerm:                      "schema",
		flightsql.SqlInfoCatalogTerm:                     "catalog",
		flightsql.SqlInfoProcedureTerm:                   "table function",
		flightsql.SqlInfoCatalogAtStart:                  true,
		flightsql.SqlInfoSearchStringEscape:              `\`,
	} {
		if err := s.RegisterSqlInfo(id, v); err != nil {
			return fmt.Errorf("sql info %d: %w", id, err)
		}
		s.sqlInfo = append(s.sqlInfo, uint32(id))
	}
	return nil
}

// sqlInfoIDs is a GetSqlInfo command for the given ids.
type sqlInfoIDs []uint32

func (ids sqlInfoIDs) GetInfo() []uint32 { return ids }

// DoGetSqlInfo answers the registered ids among those asked for and
// leaves the others out, as the Flight SQL spec allows, instead of
// failing the whole call: clients such as the JDBC driver ask for ids
// one at a time and treat an error as a broken connection.
func (s *sqlServer) DoGetSqlInfo(ctx context.Context, cmd flightsql.GetSqlInfo) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	asked := cmd.GetInfo()
	if len(asked) == 0 {
		return s.BaseServer.DoGetSqlInfo(ctx, cmd)
	}
	known := slices.DeleteFunc(slices.Clone(asked), func(id uint32) bool { return !slices.Contains(s.sqlInfo, id) })
	if len(known) == 0 {
		// The base answers everything for an empty list.
		return one(s.build(schema_ref.SqlInfo, func(*array.RecordBuilder) {}))
	}
	return s.BaseServer.DoGetSqlInfo(ctx, sqlInfoIDs(known))
}

// info is the FlightInfo of a metadata command whose result is computed
// by its DoGet: the ticket is the command itself.
func (s *sqlServer) info(desc *flight.FlightDescriptor, schema *arrow.Schema) *flight.FlightInfo {
	return &flight.FlightInfo{
		Endpoint:         []*flight.FlightEndpoint{{Ticket: &flight.Ticket{Ticket: desc.Cmd}}},
		FlightDescriptor: desc,
		Schema:           flight.SerializeSchema(schema, s.Alloc),
		TotalRecords:     -1,
		TotalBytes:       -1,
	}
}

// one streams a single record batch.
func one(rec arrow.RecordBatch) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	ch := make(chan flight.StreamChunk, 1)
	ch <- flight.StreamChunk{Data: rec}
	close(ch)
	return rec.Schema(), ch, nil
}

// build fills a record batch of schema with fill.
func (s *sqlServer) build(schema *arrow.Schema, fill func(b *array.RecordBuilder)) arrow.RecordBatch {
	b := array.NewRecordBuilder(s.Alloc, schema)
	defer b.Release()
	fill(b)
	return b.NewRecordBatch()
}

// like reports whether name matches a Flight SQL filter pattern (SQL
// LIKE: % any run, _ any one character, \ escapes); nil matches all.
func like(pattern *string, name string) bool {
	if pattern == nil {
		return true
	}
	var re strings.Builder
	re.WriteString("(?s)^")
	p := []rune(*pattern)
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '\\' && i+1 < len(p):
			i++
			re.WriteString(regexp.QuoteMeta(string(p[i])))
		case c == '%':
			re.WriteString(".*")
		case c == '_':
			re.WriteString(".")
		default:
			re.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	re.WriteString("$")
	ok, err := regexp.MatchString(re.String(), name)
	return err == nil && ok
}

// GetFlightInfoCatalogs answers GetCatalogs.
func (s *sqlServer) GetFlightInfoCatalogs(_ context.Context, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return s.info(desc, schema_ref.Catalogs), nil
}

// DoGetCatalogs lists the one catalog, "parqdb".
func (s *sqlServer) DoGetCatalogs(context.Context) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	return one(s.build(schema_ref.Catalogs, func(b *array.RecordBuilder) {
		b.Field(0).(*array.StringBuilder).Append(catalogName)
	}))
}

// GetFlightInfoSchemas answers GetDbSchemas.
func (s *sqlServer) GetFlightInfoSchemas(_ context.Context, _ flightsql.GetDBSchemas, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return s.info(desc, schema_ref.DBSchemas), nil
}

// catalogMatches reports whether a command's catalog (nil: any; "": the
// tables without one, of which there are none) selects "parqdb".
func catalogMatches(c *string) bool { return c == nil || *c == catalogName }

// DoGetDBSchemas lists the one schema, parqdb.main.
func (s *sqlServer) DoGetDBSchemas(_ context.Context, cmd flightsql.GetDBSchemas) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	return one(s.build(schema_ref.DBSchemas, func(b *array.RecordBuilder) {
		if catalogMatches(cmd.GetCatalog()) && like(cmd.GetDBSchemaFilterPattern(), schemaName) {
			b.Field(0).(*array.StringBuilder).Append(catalogName)
			b.Field(1).(*array.StringBuilder).Append(schemaName)
		}
	}))
}

// GetFlightInfoTableTypes answers GetTableTypes.
func (s *sqlServer) GetFlightInfoTableTypes(_ context.Context, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return s.info(desc, schema_ref.TableTypes), nil
}

// DoGetTableTypes lists the one table type, VIEW.
func (s *sqlServer) DoGetTableTypes(context.Context) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	return one(s.build(schema_ref.TableTypes, func(b *array.RecordBuilder) {
		b.Field(0).(*array.StringBuilder).Append(tableType)
	}))
}

// GetFlightInfoTables answers GetTables.
func (s *sqlServer) GetFlightInfoTables(_ context.Context, cmd flightsql.GetTables, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	if cmd.GetIncludeSchema() {
		return s.info(desc, schema_ref.TablesWithIncludedSchema), nil
	}
	return s.info(desc, schema_ref.Tables), nil
}

// indexes lists the catalog's indexes that a command's catalog, schema
// and table filters select, in name order.
func (s *sqlServer) indexes(ctx context.Context, cat, schema, table *string) ([]string, error) {
	if !catalogMatches(cat) || !like(schema, schemaName) {
		return nil, nil
	}
	names, err := s.srv.Pool().Catalog().List(ctx)
	if err != nil {
		return nil, toStatus(err)
	}
	slices.Sort(names)
	return slices.DeleteFunc(names, func(n string) bool { return !like(table, n) }), nil
}

// DoGetTables lists the indexes as views, with their result schema when
// the client asks for it (an index that fails to open gets an empty
// schema and a warning in the log).
func (s *sqlServer) DoGetTables(ctx context.Context, cmd flightsql.GetTables) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	names, err := s.indexes(ctx, cmd.GetCatalog(), cmd.GetDBSchemaFilterPattern(), cmd.GetTableNameFilterPattern())
	if err != nil {
		return nil, nil, err
	}
	if t := cmd.GetTableTypes(); len(t) > 0 && !slices.ContainsFunc(t, func(x string) bool { return strings.EqualFold(x, tableType) }) {
		names = nil
	}
	schema := schema_ref.Tables
	var schemas [][]byte
	if cmd.GetIncludeSchema() {
		schema = schema_ref.TablesWithIncludedSchema
		for _, n := range names {
			sc, err := s.resultSchema(ctx, n)
			if err != nil {
				// One index that cannot open must not hide the others.
				s.srv.Logger().Warn("GetTables: result schema", "index", n, "err", err)
				sc = arrow.NewSchema(nil, nil)
			}
			schemas = append(schemas, flight.SerializeSchema(sc, s.Alloc))
		}
	}
	return one(s.build(schema, func(b *array.RecordBuilder) {
		for i, n := range names {
			b.Field(0).(*array.StringBuilder).Append(catalogName)
			b.Field(1).(*array.StringBuilder).Append(schemaName)
			b.Field(2).(*array.StringBuilder).Append(n)
			b.Field(3).(*array.StringBuilder).Append(tableType)
			if schemas != nil {
				b.Field(4).(*array.BinaryBuilder).Append(schemas[i])
			}
		}
	}))
}

// sqlString quotes s as a SQL string literal.
func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// resultSchema is the Arrow schema ivf_search returns for index: that of
// a one-row search for the all-ones vector (valid under every metric),
// so it is exactly what a query gets. A column whose first value is NULL
// reads as VARCHAR there (the engine types columns from their values).
func (s *sqlServer) resultSchema(ctx context.Context, index string) (*arrow.Schema, error) {
	lease, err := s.srv.Pool().Acquire(ctx, index, 0)
	if err != nil {
		return nil, toStatus(err)
	}
	dim := lease.Index().Dim()
	lease.Release()
	ones := "[" + strings.TrimSuffix(strings.Repeat("1,", dim), ",") + "]"
	rr, err := s.eng.Query(ctx, fmt.Sprintf("SELECT * FROM ivf_search(%s, '%s', 1)", sqlString(index), ones))
	if err != nil {
		return nil, toStatus(err)
	}
	defer rr.Release()
	fields := slices.Clone(rr.Schema().Fields())
	for i, f := range fields {
		// Flight SQL column metadata: JDBC and ADBC show these as the
		// column's table, SQL type name and flags.
		fields[i].Metadata = flightsql.NewColumnMetadataBuilder().
			CatalogName(catalogName).SchemaName(schemaName).TableName(index).
			TypeName(typeName(f.Type)).IsReadOnly(true).IsSearchable(true).
			IsAutoIncrement(false).IsCaseSensitive(f.Type.ID() == arrow.STRING).Metadata()
	}
	return arrow.NewSchema(fields, nil), nil
}

// typeName is DuckDB's name for an Arrow type of a result column.
func typeName(t arrow.DataType) string {
	switch t := t.(type) {
	case *arrow.ListType:
		return typeName(t.Elem()) + "[]"
	case *arrow.LargeListType:
		return typeName(t.Elem()) + "[]"
	case *arrow.FixedSizeListType:
		return fmt.Sprintf("%s[%d]", typeName(t.Elem()), t.Len())
	}
	switch t.ID() {
	case arrow.BOOL:
		return "BOOLEAN"
	case arrow.INT8:
		return "TINYINT"
	case arrow.INT16:
		return "SMALLINT"
	case arrow.INT32:
		return "INTEGER"
	case arrow.INT64:
		return "BIGINT"
	case arrow.UINT8:
		return "UTINYINT"
	case arrow.UINT16:
		return "USMALLINT"
	case arrow.UINT32:
		return "UINTEGER"
	case arrow.UINT64:
		return "UBIGINT"
	case arrow.FLOAT32:
		return "FLOAT"
	case arrow.FLOAT64:
		return "DOUBLE"
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
		return "VARCHAR"
	case arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW:
		return "BLOB"
	case arrow.DATE32, arrow.DATE64:
		return "DATE"
	case arrow.TIMESTAMP:
		return "TIMESTAMP"
	}
	return strings.ToUpper(t.String())
}

// GetFlightInfoPrimaryKeys answers GetPrimaryKeys.
func (s *sqlServer) GetFlightInfoPrimaryKeys(_ context.Context, _ flightsql.TableRef, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return s.info(desc, schema_ref.PrimaryKeys), nil
}

// DoGetPrimaryKeys lists an index's key fields (the source columns that
// identify a row, in order) as the view's primary key.
func (s *sqlServer) DoGetPrimaryKeys(ctx context.Context, ref flightsql.TableRef) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	var keys []string
	if catalogMatches(ref.Catalog) && (ref.DBSchema == nil || *ref.DBSchema == schemaName) {
		lease, err := s.srv.Pool().Acquire(ctx, ref.Table, 0)
		if err != nil {
			return nil, nil, toStatus(err)
		}
		keys = slices.Clone(lease.Index().Snapshot().SourceKeyFields)
		lease.Release()
	}
	return one(s.build(schema_ref.PrimaryKeys, func(b *array.RecordBuilder) {
		for i, k := range keys {
			b.Field(0).(*array.StringBuilder).Append(catalogName)
			b.Field(1).(*array.StringBuilder).Append(schemaName)
			b.Field(2).(*array.StringBuilder).Append(ref.Table)
			b.Field(3).(*array.StringBuilder).Append(k)
			b.Field(4).(*array.Int32Builder).Append(int32(i + 1))
			b.Field(5).(*array.StringBuilder).AppendNull()
		}
	}))
}

// xdbcType is one row of GetXdbcTypeInfo: a DuckDB type that results can
// hold, with its JDBC/ODBC type code.
type xdbcType struct {
	name    string
	code    int32 // java.sql.Types
	size    int32 // precision or maximum length (0: not applicable)
	quoted  bool  // literals are written in single quotes
	numeric bool  // num_prec_radix 10
}

// xdbcTypes are sorted by code, as JDBC's getTypeInfo lists them.
var xdbcTypes = []xdbcType{
	{"TINYINT", -6, 3, false, true},
	{"BIGINT", -5, 19, false, true},
	{"BLOB", -3, 0, true, false},
	{"INTEGER", 4, 10, false, true},
	{"SMALLINT", 5, 5, false, true},
	{"FLOAT", 7, 24, false, true},
	{"DOUBLE", 8, 53, false, true},
	{"VARCHAR", 12, 0, true, false},
	{"BOOLEAN", 16, 1, false, false},
	{"DATE", 91, 10, true, false},
	{"TIMESTAMP", 93, 26, true, false},
	{"LIST", 2003, 0, false, false},
}

// GetFlightInfoXdbcTypeInfo answers GetXdbcTypeInfo.
func (s *sqlServer) GetFlightInfoXdbcTypeInfo(_ context.Context, _ flightsql.GetXdbcTypeInfo, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return s.info(desc, schema_ref.XdbcTypeInfo), nil
}

// DoGetXdbcTypeInfo lists the SQL types results hold (all of them, or
// those of the requested type code).
func (s *sqlServer) DoGetXdbcTypeInfo(_ context.Context, cmd flightsql.GetXdbcTypeInfo) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	return one(s.build(schema_ref.XdbcTypeInfo, func(b *array.RecordBuilder) {
		for _, t := range xdbcTypes {
			if dt := cmd.GetDataType(); dt != nil && *dt != t.code {
				continue
			}
			str := func(i int, v string, ok bool) {
				if ok {
					b.Field(i).(*array.StringBuilder).Append(v)
				} else {
					b.Field(i).(*array.StringBuilder).AppendNull()
				}
			}
			i32 := func(i int, v int32, ok bool) {
				if ok {
					b.Field(i).(*array.Int32Builder).Append(v)
				} else {
					b.Field(i).(*array.Int32Builder).AppendNull()
				}
			}
			str(0, t.name, true)
			i32(1, t.code, true)
			i32(2, t.size, t.size > 0)
			str(3, "'", t.quoted)
			str(4, "'", t.quoted)
			b.Field(5).(*array.ListBuilder).Append(true) // no create params
			i32(6, 1, true)                              // nullable
			b.Field(7).(*array.BooleanBuilder).Append(t.quoted && t.code == 12)
			i32(8, 3, true) // searchable with any WHERE
			b.Field(9).(*array.BooleanBuilder).Append(false)
			b.Field(10).(*array.BooleanBuilder).Append(false)
			b.Field(11).(*array.BooleanBuilder).Append(false)
			str(12, t.name, true)
			i32(13, 0, t.numeric)
			i32(14, 0, t.numeric)
			i32(15, t.code, true)
			i32(16, 0, false)
			i32(17, 10, t.numeric)
			i32(18, 0, false)
		}
	}))
}
