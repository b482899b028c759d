package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/parqdb/parqdb/metadata"
	"github.com/spf13/cobra"
)

func init() { subcommands = append(subcommands, newMetadataCmd) }

func newMetadataCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "metadata",
		Short: "Inspect and check index metadata files",
	}
	cmd.AddCommand(newMetadataValidateCmd())
	return cmd
}

func newMetadataValidateCmd() *cobra.Command {
	var centroid bool
	cmd := &cobra.Command{
		Use:   "validate [--centroid] FILE|DIR...",
		Short: "Validate index metadata files and IVF centroid metadata files",
		Long: `validate checks each file strictly against its own rules (see
docs/format.md). A warehouse's metadata/ folder holds two kinds of file, and
validate tells them apart by content: a document whose top-level keys are
mostly those of an IVF centroid document (artifact-uuid, fingerprint,
created-at-ms, descriptor, centroids, roots) is checked as one; any other
file is checked as index metadata (the index metadata spec and the IVF
rules). --centroid checks every file as a centroid document instead.

A directory argument stands for every *.json file directly inside it, in
name order (a directory without one is a usage error). For each file it
prints "FILE: ok" or one line per problem, "FILE: PATH: RULE". It exits 0
only if every file is valid, 1 if any is invalid or unreadable, and 2 on a
usage error.`,
		Example: `  parqdb metadata validate warehouse/metadata/*/*.json
  parqdb metadata validate warehouse/metadata/*/`,
		Args: minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			files, err := expandMetadataArgs(args)
			if err != nil {
				return err
			}
			if !validateMetadataFiles(cmd.OutOrStdout(), files, centroid) {
				return errSilent
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&centroid, "centroid", false, "check every file as an IVF centroid metadata document (default: tell by content)")
	return cmd
}

// expandMetadataArgs replaces each directory argument by the *.json files
// directly inside it, sorted. A missing argument is a usage error; an empty
// directory is one too, because it validates nothing.
func expandMetadataArgs(args []string) ([]string, error) {
	var files []string
	for _, a := range args {
		fi, err := os.Stat(a)
		if err != nil {
			return nil, usagef("%s: %v", a, errors.Unwrap(err))
		}
		if !fi.IsDir() {
			files = append(files, a)
			continue
		}
		entries, err := os.ReadDir(a)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", a, err)
		}
		var found []string
		for _, e := range entries {
			if !e.IsDir() && strings.HasSuffix(e.Name(), ".json") {
				found = append(found, filepath.Join(a, e.Name()))
			}
		}
		if len(found) == 0 {
			return nil, usagef("%s: directory holds no *.json file", a)
		}
		slices.Sort(found)
		files = append(files, found...)
	}
	return files, nil
}

// validateMetadataFiles prints one verdict per file and reports whether all
// were valid.
func validateMetadataFiles(w io.Writer, files []string, centroid bool) bool {
	allOK := true
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err == nil {
			if centroid || looksLikeCentroid(data) {
				_, err = metadata.ParseCentroidFile(f, data)
			} else {
				_, err = metadata.ParseFile(f, data)
			}
		}
		var ve *metadata.ValidationError
		switch {
		case err == nil:
			fmt.Fprintf(w, "%s: ok\n", f)
		case errors.As(err, &ve):
			allOK = false
			for _, p := range ve.Problems {
				fmt.Fprintf(w, "%s: %s\n", f, oneLine(p.String()))
			}
		default:
			allOK = false
			fmt.Fprintf(w, "%s: %s\n", f, oneLine(err.Error()))
		}
	}
	return allOK
}

// Top-level keys that only one kind of metadata document has.
var (
	centroidOnlyKeys = []string{"artifact-uuid", "fingerprint", "created-at-ms", "descriptor", "centroids", "roots"}
	indexOnlyKeys    = []string{"index-uuid", "last-updated-ms", "last-sequence-number", "current-snapshot-id", "snapshots", "snapshot-log", "properties"}
)

// looksLikeCentroid reports whether data's top-level object has more keys
// of an IVF centroid document than of an index metadata document. It reads
// the keys up to the first syntax error, so a damaged centroid document is
// still checked by the centroid rules; the strict parser that runs next
// reports the damage. Anything else (not an object, a tie) counts as index
// metadata.
func looksLikeCentroid(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return false
	}
	centroidKeys, indexKeys := 0, 0
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		key, _ := tok.(string)
		switch {
		case slices.Contains(centroidOnlyKeys, key):
			centroidKeys++
		case slices.Contains(indexOnlyKeys, key):
			indexKeys++
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			break
		}
	}
	return centroidKeys > indexKeys
}

// oneLine keeps one problem on one output line whatever the rule says.
func oneLine(s string) string {
	return strings.NewReplacer("\n", `\n`, "\r", `\r`).Replace(s)
}
