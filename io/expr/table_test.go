package expr

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// writeTable writes text to a file name in a fresh folder and returns its
// path.
func writeTable(t *testing.T, name, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestTableInterpolatesAndHolds(t *testing.T) {
	path := writeTable(t, "wall.csv", "t,value\n0, 280\n3600,290\n\n# noon\n7200,  310\r\n")
	tb, err := LoadTable("boundary.x_hi.value", path)
	if err != nil {
		t.Fatal(err)
	}
	if tb.Path() != path || tb.Len() != 3 {
		t.Errorf("Path %q, Len %d", tb.Path(), tb.Len())
	}
	for _, c := range []struct{ t, want float64 }{
		{-100, 280}, {0, 280}, {1800, 285}, {900, 282.5}, {3600, 290},
		{5400, 300}, {7200, 310}, {1e9, 310},
	} {
		if got := tb.At(c.t); got != c.want {
			t.Errorf("At(%g) = %v, want %v", c.t, got, c.want)
		}
	}
	one, err := LoadTable("k", writeTable(t, "one.csv", "5,42\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []float64{-1, 5, 7} {
		if got := one.At(x); got != 42 {
			t.Errorf("a table of one row at %g: %v, want 42", x, got)
		}
	}
}

func TestTableErrors(t *testing.T) {
	for _, c := range []struct{ name, text, want string }{
		{"order.csv", "t,value\n0,1\n3,2\n2,3\n", "order.csv line 4: t = 2 is not after 3"},
		{"dup.csv", "0,1\n1,2\n1,3\n", "dup.csv line 3: t = 1 is not after 1"},
		{"nan.csv", "t,value\n0,1\n1,nan\n", "nan.csv line 3: the value at t = 1 is nan, not finite"},
		{"inf.csv", "0,1\ninf,2\n", "inf.csv line 2: t = inf is not finite"},
		{"empty.csv", "t,value\n\n", "empty.csv: holds no rows"},
		{"blank.csv", "", "blank.csv: holds no rows"},
		{"bad.csv", "t,value\n0,1\n1,2x\n", `bad.csv line 3: value "2x" is not a number`},
		{"badt.csv", "0,1\nnoon,2\n", `badt.csv line 2: t "noon" is not a number`},
		{"fields.csv", "0,1\n1,2,3\n", "fields.csv line 2: 3 fields"},
	} {
		path := writeTable(t, c.name, c.text)
		_, err := LoadTable("boundary.x_hi.value", path)
		var te *TableError
		if !errors.As(err, &te) {
			t.Errorf("%s: %v, want a *TableError", c.name, err)
			continue
		}
		want := "boundary.x_hi.value: " + filepath.Join(filepath.Dir(path), c.want)
		if !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s:\n got %q\nwant %q…", c.name, err.Error(), want)
		}
	}
	_, err := LoadTable("source.table", filepath.Join(t.TempDir(), "gone.csv"))
	if err == nil || !strings.Contains(err.Error(), "gone.csv: no such file") {
		t.Errorf("missing file: %v", err)
	}
}

// A table may be a link to a regular file (followed once, as git-annex
// and DVC keep data); a link to anything else is refused naming it.
func TestTableThroughALink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "wall-data.csv")
	require.NoError(t, os.WriteFile(real, []byte("t,value\n0,1\n1,3\n"), 0o644))
	link := filepath.Join(dir, "wall.csv")
	require.NoError(t, os.Symlink("wall-data.csv", link))
	tb, err := LoadTable("boundary.value", link)
	require.NoError(t, err)
	require.Equal(t, 2.0, tb.At(0.5))
	bad := filepath.Join(dir, "folder.csv")
	require.NoError(t, os.Symlink(".", bad))
	_, err = LoadTable("boundary.value", bad)
	require.ErrorContains(t, err, "folder.csv is a symbolic link to .")
}
