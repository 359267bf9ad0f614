package expr

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// bigTable is a table of n rows, t = i/10, value 280 + i%97.
func bigTable(n int) string {
	var b strings.Builder
	b.WriteString("t,value\n")
	for i := range n {
		fmt.Fprintf(&b, "%g,%d\n", float64(i)/10, 280+i%97)
	}
	return b.String()
}

// A table file is parsed once a process: loads of the same file, by any
// path, and concurrent ones, share its rows (a 63 MB table used for a 3D
// face's value and h peaked at 2.8 GB, parsed again at every use); its
// Digest is the SHA-256 of its bytes and Bytes what its rows hold.
func TestTableReadOnce(t *testing.T) {
	text := bigTable(1000)
	path := writeTable(t, "wall.csv", text)
	first, err := LoadTable("boundary.x_hi.value", path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(text))
	if first.Digest() != hex.EncodeToString(sum[:]) {
		t.Errorf("Digest %s, want the SHA-256 of the file %x", first.Digest(), sum)
	}
	if b := first.Bytes(); b < 16*1000 || b > 16*1100 {
		t.Errorf("Bytes %d for 1000 rows of two float64", b)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(wd, path)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	loads := make([]*Table, 16)
	for i := range loads {
		wg.Go(func() {
			p := path
			if i%2 == 1 {
				p = rel
			}
			tb, err := LoadTable("boundary.x_lo.h", p)
			if err != nil {
				t.Error(err)
				return
			}
			loads[i] = tb
		})
	}
	wg.Wait()
	for i, tb := range loads {
		if tb == nil || tb.tableData != first.tableData {
			t.Fatalf("load %d did not share the rows read first", i)
		}
		if want := map[bool]string{false: path, true: rel}[i%2 == 1]; tb.Path() != want {
			t.Errorf("load %d: Path %q, want %q as given", i, tb.Path(), want)
		}
	}
}

// A table file that changed is read anew: rewritten in place (a new
// modification time), or replaced by another file of the same size and
// time (a new inode).
func TestTableChangedReadAgain(t *testing.T) {
	path := writeTable(t, "wall.csv", "0,1\n1,2\n")
	a, err := LoadTable("k", path)
	if err != nil {
		t.Fatal(err)
	}
	when := time.Now().Add(-time.Hour)
	if err := os.WriteFile(path, []byte("0,1\n1,3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, when, when); err != nil {
		t.Fatal(err)
	}
	b, err := LoadTable("k", path)
	if err != nil {
		t.Fatal(err)
	}
	if b.At(1) != 3 || b.Digest() == a.Digest() {
		t.Fatalf("a rewritten table: At(1) = %v, digest %s (was %s)", b.At(1), b.Digest(), a.Digest())
	}
	other := filepath.Join(filepath.Dir(path), "other.csv")
	if err := os.WriteFile(other, []byte("0,1\n1,4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(other, when, when); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(other, path); err != nil {
		t.Fatal(err)
	}
	c, err := LoadTable("k", path)
	if err != nil {
		t.Fatal(err)
	}
	if c.At(1) != 4 {
		t.Fatalf("a table replaced by a file of the same size and time: At(1) = %v, want 4", c.At(1))
	}
}

// A table streams in: loading one allocates little more than twice what
// its rows keep (the blocks they are read into, then their slices), not
// copies of the whole file (it was read whole, copied into a string and
// split into lines: 30.8 MB allocated for these 200,000 rows, which keep
// 3.2 MB; now 7.3 MB).
func TestTableStreams(t *testing.T) {
	const rows = 200000
	path := writeTable(t, "big.csv", bigTable(rows))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	tb, err := LoadTable("source.amplitude", path)
	if err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	st, _ := os.Stat(path)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d rows, %d bytes of file: %d bytes kept, %d allocated", tb.Len(), st.Size(), tb.Bytes(), alloc)
	if tb.Len() != rows || alloc > uint64(2*tb.Bytes()+st.Size()) {
		t.Errorf("%d rows from %d bytes of file allocated %d bytes to keep %d", tb.Len(), st.Size(), alloc, tb.Bytes())
	}
}

// A table file that failed to load is read again when named again; a
// line longer than a row can be is refused naming it.
func TestTableLongLinesAndFailedReads(t *testing.T) {
	long := writeTable(t, "long.csv", "0,1\n1,"+strings.Repeat("2", 70000)+"\n")
	for range 2 {
		_, err := LoadTable("boundary.x_hi.h", long)
		if want := "boundary.x_hi.h: " + long + " line 2: longer than 65536 bytes; a row is t,value"; err == nil || err.Error() != want {
			t.Errorf("a long line: %v, want %s", err, want)
		}
	}
	if err := os.WriteFile(long, []byte("0,1\n1,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(long, time.Unix(1e9, 0), time.Unix(1e9, 0)); err != nil {
		t.Fatal(err)
	}
	if tb, err := LoadTable("boundary.x_hi.h", long); err != nil || tb.At(1) != 2 {
		t.Errorf("mended: %v, %v", tb, err)
	}
}
