// Command parqdb builds, searches and serves vector indexes over Parquet
// tables. Each subcommand lives in its own file; this file holds the root
// command, the global settings and the exit-code contract:
// 0 success, 1 the command ran and found a problem, 2 usage error,
// 130 (143) a long command stopped by SIGINT (SIGTERM), see signal.go.
package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/indexer"
	"github.com/parqdb/parqdb/internal/version"
	"github.com/parqdb/parqdb/knnjoin"
	"github.com/parqdb/parqdb/query"
)

// Exit codes.
const (
	exitOK      = 0
	exitProblem = 1
	exitUsage   = 2
)

// usageError marks an error as a usage error (exit 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// errSilent reports a failure whose details the command already printed.
var errSilent = errors.New("")

// globals are the settings every subcommand shares.
type globals struct {
	warehouse string
	catalog   string
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func newRootCmd() (*cobra.Command, *globals) {
	g := &globals{}
	root := &cobra.Command{
		Use:           "parqdb",
		Short:         "Vector indexes over Parquet tables",
		Long:          "parqdb builds IVF vector indexes over Parquet tables in a local folder or S3-compatible storage, and searches them.",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version.String(),
	}
	root.SetVersionTemplate("parqdb {{.Version}}\n")
	// An unknown command or flag suggests the nearest one.
	root.SuggestionsMinimumDistance = 2
	root.PersistentFlags().StringVar(&g.warehouse, "warehouse", envOr("PARQDB_WAREHOUSE", catalog.DefaultWarehouse),
		"warehouse location: a local folder or s3://bucket/prefix (env PARQDB_WAREHOUSE)")
	root.PersistentFlags().StringVar(&g.catalog, "catalog", os.Getenv("PARQDB_CATALOG"),
		"catalog: empty for SQLite at <warehouse>/catalog.db, sqlite:PATH, postgres://…, or 'warehouse' (env PARQDB_CATALOG)")
	root.SetFlagErrorFunc(flagError)
	// Every command's numeric flags are range-checked before it runs.
	root.PersistentPreRunE = func(cmd *cobra.Command, args []string) error { return checkFlagRanges(cmd) }
	for _, add := range subcommands {
		root.AddCommand(add(g))
	}
	root.AddCommand(&cobra.Command{
		Use:   "version",
		Short: "Print parqdb's version (as parqdb --version does)",
		Args:  exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "parqdb %s\n", version.String())
			return err
		},
	})
	return root, g
}

// subcommands registers constructors from each subcommand file's init.
var subcommands []func(*globals) *cobra.Command

// exactArgs is cobra.ExactArgs returning a usage error.
func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usagef("%s takes %d argument(s), got %d", cmd.CommandPath(), n, len(args))
		}
		return nil
	}
}

// minArgs is cobra.MinimumNArgs returning a usage error.
func minArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < n {
			return usagef("%s takes at least %d argument(s), got %d", cmd.CommandPath(), n, len(args))
		}
		return nil
	}
}

func run(args []string) int {
	root, _ := newRootCmd()
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	if !errors.Is(err, errSilent) {
		fmt.Fprintln(os.Stderr, "parqdb:", withHint(err))
	}
	return exitCode(err)
}

// exitCode is the exit status for a command's error (nil: exitOK).
func exitCode(err error) int {
	var ue usageError
	var ie interruptedError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ie):
		return ie.exitCode()
	case errors.As(err, &ue) || isCobraUsage(err) || isBadSetting(err):
		return exitUsage
	}
	return exitProblem
}

// isBadSetting recognises errors caused by a flag value the user gave: an
// unknown --catalog spec, an invalid index name, build options the source
// cannot satisfy (--nlist above its row count) or an invalid query option
// or vector.
func isBadSetting(err error) bool {
	return errors.Is(err, catalog.ErrUnknownCatalog) || errors.Is(err, catalog.ErrInvalidName) ||
		errors.Is(err, indexer.ErrOptions) || errors.Is(err, query.ErrBadQuery) || errors.Is(err, knnjoin.ErrOptions)
}

// isCobraUsage recognises the usage errors cobra makes itself.
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand flag", "accepts ", "requires at least", "invalid argument"} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

func main() { os.Exit(run(os.Args[1:])) }
