// Package csvtest reads the CSV files heat writes (diagnostics, study
// tables) in tests: the whole file, then columns by their header name.
package csvtest

import (
	"encoding/csv"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// Read returns every row of the CSV file at path, the header first.
func Read(t testing.TB, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err, path)
	require.NotEmpty(t, rows, "%s has no header", path)
	return rows
}

// Column is the named column of rows (header first), header left out.
func Column(t testing.TB, rows [][]string, name string) []string {
	t.Helper()
	i := slices.Index(rows[0], name)
	require.GreaterOrEqual(t, i, 0, "column %s in %v", name, rows[0])
	var out []string
	for _, r := range rows[1:] {
		out = append(out, r[i])
	}
	return out
}

// Floats is the named column of rows as numbers.
func Floats(t testing.TB, rows [][]string, name string) []float64 {
	t.Helper()
	var out []float64
	for _, s := range Column(t, rows, name) {
		v, err := strconv.ParseFloat(s, 64)
		require.NoError(t, err, "column %s", name)
		out = append(out, v)
	}
	return out
}
