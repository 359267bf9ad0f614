package expr

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"sync"

	"heat/internal/safefile"
	"heat/io/media"
)

// MaxTableBytes bounds what is read of a table file: some two million rows.
const MaxTableBytes = 64 << 20

// maxTableLine bounds one line of a table file: a row t,value is short.
const maxTableLine = 64 << 10

// Table is a value given in time by a CSV file of rows t,value: linear in
// between, the first value before the first t and the last after the last.
// Its rows are read once a process however often the file is named (see
// LoadTable) and shared: a Table is never changed once loaded.
type Table struct {
	path string // the file as given
	*tableData
}

// tableData is what a table file holds, as read once.
type tableData struct {
	t, val  []float64
	digest  string  // the SHA-256 of the file's bytes, hex
	minV    float64 // the least value,
	minT    float64 // the t of its first row,
	minLine int     // and that row's line
}

// TableError is a mistake in a table file: the config key that named it,
// the file as given, the line (from 1; 0 when the mistake is the whole
// file's) and what.
type TableError struct {
	Key, Path string
	Line      int
	Msg       string
}

// Error is "boundary.x_hi.value: wall.csv line 4: t = 2 is not after 3".
func (e *TableError) Error() string {
	at := e.Path
	if e.Line > 0 {
		at = fmt.Sprintf("%s line %d", e.Path, e.Line)
	}
	if e.Key == "" {
		return at + ": " + e.Msg
	}
	return e.Key + ": " + at + ": " + e.Msg
}

// tableID is what tells a table file apart from the one read before at
// its path: its size, modification time, device and inode (a file
// rewritten, or replaced by another, is read anew).
type tableID struct {
	size, mtime int64
	dev, ino    uint64
}

// tableEntry is the table file at a path being read (done open) or read:
// its identity then, and its rows or why not.
type tableEntry struct {
	id   tableID
	done chan struct{}
	data *tableData
	err  *TableError // Key and Path left empty: each caller's own
}

// tables are the table files read in this process, by cleaned absolute
// path: the last one read at each.
var tables = struct {
	sync.Mutex
	m map[string]*tableEntry
}{m: map[string]*tableEntry{}}

// LoadTable reads the table file path for config key key. The file is
// CSV: an optional header line (t,value, or any two names), then rows
// t,value — t strictly increasing, both finite numbers, at least one row.
// Blank lines and lines starting with # are skipped. Errors are
// *TableError naming the line.
//
// A file is parsed once a process, as it streams in: every later load of
// the same file, unchanged (its absolute path, size, modification time
// and inode), shares the rows read, also while another goroutine reads
// them. A file that changed is read anew, and replaces the old one.
func LoadTable(key, path string) (*Table, error) {
	fail := func(line int, format string, args ...any) error {
		return &TableError{Key: key, Path: path, Line: line, Msg: fmt.Sprintf(format, args...)}
	}
	// A link to a regular file is followed once (git-annex, DVC).
	target, err := safefile.Follow(path)
	if err != nil {
		return nil, fail(0, "%v", err)
	}
	f, st, err := safefile.Open(target)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fail(0, "no such file")
	case err != nil:
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fail(0, "%v", err)
	}
	defer f.Close()
	if st.Size() > MaxTableBytes {
		return nil, fail(0, "%d bytes, more than the %d a table may take", st.Size(), MaxTableBytes)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fail(0, "%v", err)
	}
	id := tableID{size: st.Size(), mtime: st.ModTime().UnixNano()}
	id.dev, id.ino = fileID(st)
	tables.Lock()
	e := tables.m[abs]
	read := e == nil || e.id != id || isClosed(e.done) && e.err != nil
	if read {
		e = &tableEntry{id: id, done: make(chan struct{})}
		tables.m[abs] = e
	}
	tables.Unlock()
	if read {
		e.data, e.err = parseTable(f)
		close(e.done)
	}
	<-e.done
	if e.err != nil {
		return nil, &TableError{Key: key, Path: path, Line: e.err.Line, Msg: e.err.Msg}
	}
	return &Table{path: path, tableData: e.data}, nil
}

// isClosed reports whether c is closed.
func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// tableChunk is how many rows parseTable collects in a block before it
// starts another: the rows end in slices of their exact length, built
// without append's growing copies of the whole.
const tableChunk = 1 << 14

// parseTable reads a table file from r, hashing what it reads; errors
// carry the line and the message.
func parseTable(r io.Reader) (*tableData, *TableError) {
	fail := func(line int, format string, args ...any) *TableError {
		return &TableError{Line: line, Msg: fmt.Sprintf(format, args...)}
	}
	h := sha256.New()
	n := &counter{r: io.LimitReader(r, MaxTableBytes+1)}
	sc := bufio.NewScanner(io.TeeReader(n, h))
	sc.Buffer(make([]byte, 0, 4096), maxTableLine)
	var blocks [][2][]float64 // full blocks of t and values
	var ts, vs []float64      // the block being filled
	rows, last := 0, math.Inf(-1)
	d := &tableData{minV: math.Inf(1)}
	first := true
	line := 0
	for sc.Scan() {
		line++
		text := bytes.TrimSpace(sc.Bytes()) // the scanner's: no copy a line
		if len(text) == 0 || text[0] == '#' {
			continue
		}
		tb, vb, ok := bytes.Cut(text, []byte{','})
		if !ok || bytes.IndexByte(vb, ',') >= 0 {
			return nil, fail(line, "%d fields in %q; a row is t,value", 1+bytes.Count(text, []byte{','}), short(string(text)))
		}
		tb, vb = bytes.TrimSpace(tb), bytes.TrimSpace(vb)
		t, errT := strconv.ParseFloat(string(tb), 64)
		v, errV := strconv.ParseFloat(string(vb), 64)
		if first && errT != nil && errV != nil {
			first = false
			continue // the header
		}
		first = false
		switch {
		case errT != nil:
			return nil, fail(line, "t %q is not a number", short(string(tb)))
		case errV != nil:
			return nil, fail(line, "value %q is not a number", short(string(vb)))
		case math.IsNaN(t) || math.IsInf(t, 0):
			return nil, fail(line, "t = %s is not finite", media.FormatNumber(t))
		case math.IsNaN(v) || math.IsInf(v, 0):
			return nil, fail(line, "the value at t = %s is %s, not finite", media.FormatNumber(t), media.FormatNumber(v))
		case rows > 0 && !(t > last):
			return nil, fail(line, "t = %s is not after %s; t must increase from row to row", media.FormatNumber(t), media.FormatNumber(last))
		}
		if v < d.minV {
			d.minV, d.minT, d.minLine = v, t, line
		}
		if len(ts) == tableChunk {
			blocks = append(blocks, [2][]float64{ts, vs})
			ts, vs = make([]float64, 0, tableChunk), make([]float64, 0, tableChunk)
		}
		ts, vs = append(ts, t), append(vs, v)
		rows++
		last = t
	}
	switch err := sc.Err(); {
	case errors.Is(err, bufio.ErrTooLong):
		return nil, fail(line+1, "longer than %d bytes; a row is t,value", maxTableLine)
	case err != nil:
		return nil, fail(0, "%v", err)
	case n.n > MaxTableBytes:
		return nil, fail(0, "more than the %d bytes a table may take", MaxTableBytes)
	case rows == 0:
		return nil, fail(0, "holds no rows; a table is rows t,value (a header line t,value first is optional)")
	}
	if len(blocks) == 0 {
		d.t, d.val = slices.Clone(ts), slices.Clone(vs) // at most a block
	} else {
		d.t, d.val = make([]float64, 0, rows), make([]float64, 0, rows)
		for i, b := range blocks {
			d.t, d.val = append(d.t, b[0]...), append(d.val, b[1]...)
			blocks[i] = [2][]float64{} // the block may go now
		}
		d.t, d.val = append(d.t, ts...), append(d.val, vs...)
	}
	d.digest = hex.EncodeToString(h.Sum(nil))
	return d, nil
}

// counter counts the bytes read through it.
type counter struct {
	r io.Reader
	n int64
}

func (c *counter) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	c.n += int64(k)
	return k, err
}

// short cuts a text for a message.
func short(s string) string {
	if r := []rune(s); len(r) > 40 {
		return string(r[:37]) + "..."
	}
	return s
}

// At is the table's value at time t: linear between the rows around t
// (exactly a row's value at its t), the first row's value before it, the
// last's after it; NaN at NaN.
func (tb *Table) At(t float64) float64 {
	ts, vs := tb.t, tb.val
	switch {
	case math.IsNaN(t):
		return t
	case t <= ts[0]:
		return vs[0]
	case t >= ts[len(ts)-1]:
		return vs[len(vs)-1]
	}
	// ts[i-1] <= t < ts[i]
	i := sort.SearchFloat64s(ts, t)
	if ts[i] == t {
		return vs[i]
	}
	w := (t - ts[i-1]) / (ts[i] - ts[i-1])
	return float64((1-w)*vs[i-1]) + float64(w*vs[i])
}

// Knots are the table's times, ascending (read only): where its slope
// changes.
func (tb *Table) Knots() []float64 { return tb.t }

// Path is the table's file as given.
func (tb *Table) Path() string { return tb.path }

// Len is the number of rows.
func (tb *Table) Len() int { return len(tb.t) }

// Bytes is the memory the table's rows hold: shared by every load of the
// same unchanged file, so a memory estimate counts it once per file (per
// absolute path of its tables).
func (tb *Table) Bytes() int64 { return 8 * int64(cap(tb.t)+cap(tb.val)) }

// Digest is the SHA-256 of the table file's content as it was read, in
// hex: what a restart compares to tell a changed table.
func (tb *Table) Digest() string { return tb.digest }

// Min is the least value of the table, the t of the first row that holds
// it and that row's line in the file: what a sign rule (a heat-transfer
// coefficient >= 0) names.
func (tb *Table) Min() (v, t float64, line int) { return tb.minV, tb.minT, tb.minLine }
