package media

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"heat/field"
	"heat/internal/hugemem"
	"heat/internal/safefile"
)

// A NumPy .npy file (format versions 1.0, 2.0 and 3.0): the magic
// "\x93NUMPY", the version (two bytes), the header's length (2 bytes
// little-endian in 1.0, 4 in 2.0 and 3.0), the header — a Python dict
// literal {'descr': '<f8', 'fortran_order': False, 'shape': (64, 64), }
// padded with spaces and ending in a newline — then the values, C order.
// heat reads the data types '<f8', '>f8', '<f4' and '>f4', C order only.

const npyMagic = "\x93NUMPY"

// npyArray is an open .npy file.
type npyArray struct {
	f     *os.File
	path  string
	dims  []int
	descr string
	item  int // bytes per value
	order binary.ByteOrder
	start int64 // the file offset of the first value
	buf   []byte
}

// openNPY opens the .npy file file and checks its header and size;
// messages name it path, as given (a link's name, where file is its
// target).
func openNPY(file, path string) (*npyArray, error) {
	f, st, err := safefile.Open(file)
	if err != nil {
		return nil, openError(file, err)
	}
	a, err := parseNPY(f, path, st.Size())
	if err != nil {
		f.Close()
		return nil, err
	}
	return a, nil
}

// openError says why a file could not be opened, naming it once.
func openError(path string, err error) error {
	if errors.Is(err, safefile.ErrNotRegular) {
		return err // "PATH is a named pipe (FIFO), not a regular file"
	}
	return fmt.Errorf("%s: %v", path, unwrapPath(err))
}

// parseNPY reads and checks the header of the .npy file f of size bytes.
func parseNPY(f *os.File, path string, size int64) (*npyArray, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s: not a .npy heat reads: %s", path, fmt.Sprintf(format, args...))
	}
	var pre [12]byte
	n, err := io.ReadFull(f, pre[:])
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if n < 10 || string(pre[:6]) != npyMagic {
		return nil, fmt.Errorf("%s: not a .npy file (no \\x93NUMPY magic at its start) nor a Zarr v3 array folder", path)
	}
	var hlen, at int
	switch pre[6] {
	case 1:
		hlen, at = int(binary.LittleEndian.Uint16(pre[8:])), 10
	case 2, 3:
		if n < 12 {
			return nil, bad("the header is cut short")
		}
		hlen, at = int(binary.LittleEndian.Uint32(pre[8:])), 12
	default:
		return nil, bad("format version %d.%d (heat reads 1.0, 2.0 and 3.0)", pre[6], pre[7])
	}
	if hlen > maxMetaBytes || int64(at+hlen) > size {
		return nil, bad("its header of %d bytes does not fit in the file of %d bytes", hlen, size)
	}
	hdr := make([]byte, hlen)
	if _, err := f.ReadAt(hdr, int64(at)); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	d, err := parseDict(string(hdr))
	if err != nil {
		return nil, bad("header %s: %v", shortText(string(hdr)), err)
	}
	a := &npyArray{f: f, path: path, start: int64(at + hlen)}
	descr, ok := d["descr"].(string)
	if !ok {
		return nil, bad("its header has no 'descr' string (a structured data type?)")
	}
	a.descr = descr
	switch descr {
	case "<f8", ">f8", "<f4", ">f4":
		a.item = int(descr[2] - '0')
		a.order = binary.ByteOrder(binary.LittleEndian)
		if descr[0] == '>' {
			a.order = binary.BigEndian
		}
	default:
		return nil, fmt.Errorf("%s: data type %q is not supported; a map is float64 or float32 ('<f8', '>f8', '<f4', '>f4'): np.save(path, a.astype(np.float64))", path, descr)
	}
	switch fo := d["fortran_order"].(type) {
	case bool:
		if fo {
			return nil, fmt.Errorf("%s: fortran_order is True; a map is C order: np.save(path, np.ascontiguousarray(a))", path)
		}
	default:
		return nil, bad("its header has no 'fortran_order' True or False")
	}
	shape, ok := d["shape"].([]any)
	if !ok {
		return nil, bad("its header has no 'shape' tuple")
	}
	total := int64(1)
	for _, e := range shape {
		n, ok := e.(int64)
		if !ok {
			return nil, bad("shape %v holds a non-integer", shape)
		}
		a.dims = append(a.dims, int(n))
		if n > 0 && total > math.MaxInt64/int64(a.item)/n {
			return nil, bad("shape %v is too large", a.dims)
		}
		total *= n
	}
	if a.dims == nil {
		a.dims = []int{}
	}
	if want := a.start + total*int64(a.item); size != want {
		return nil, fmt.Errorf("%s is %d bytes, but its header and shape %v of %s take %d: the file is cut short or has bytes after the values", path, size, a.dims, descr, want)
	}
	return a, nil
}

// shortText cuts a header for a message.
func shortText(s string) string {
	s = strings.TrimRight(s, " \n")
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return strconv.Quote(s)
}

func (a *npyArray) shape() []int { return a.dims }
func (a *npyArray) close()       { a.f.Close() }

// read reads the rows of the box, merging rows that lie one after
// another in the file, at most maxBlock values a read.
func (a *npyArray) read(lo, hi []int, dst []float64) error {
	runLin, runN, pos := 0, 0, 0
	flush := func() error {
		if runN == 0 {
			return nil
		}
		err := a.readValues(runLin, dst[pos:pos+runN])
		pos += runN
		runN = 0
		return err
	}
	return errors.Join(eachRow(lo, hi, func(start []int, n int) error {
		lin := field.Linear(start, a.dims)
		for n > 0 {
			piece := min(n, maxBlock)
			if runN > 0 && runLin+runN == lin && runN+piece <= maxBlock {
				runN += piece
			} else {
				if err := flush(); err != nil {
					return err
				}
				runLin, runN = lin, piece
			}
			lin += piece
			n -= piece
		}
		return nil
	}), flush())
}

// readValues reads len(dst) values from the k-th on.
func (a *npyArray) readValues(k int, dst []float64) error {
	nb := len(dst) * a.item
	if cap(a.buf) < nb {
		a.buf = hugemem.Bytes(nb)
	}
	b := a.buf[:nb]
	if _, err := a.f.ReadAt(b, a.start+int64(k)*int64(a.item)); err != nil {
		return fmt.Errorf("%s: reading %d values from cell %v: %v", a.path, len(dst), unravel(k, a.dims), err)
	}
	decodeValues(dst, b, a.item, a.order)
	return nil
}

// scan reads the whole file in blocks of maxBlock values.
func (a *npyArray) scan(fn func(vals []float64, at func(int) []int, missing string) error) error {
	total := field.Cells(a.dims)
	vals := hugemem.Floats(min(total, maxBlock))
	for start := 0; start < total; start += maxBlock {
		v := vals[:min(maxBlock, total-start)]
		if err := a.readValues(start, v); err != nil {
			return err
		}
		if err := fn(v, func(k int) []int { return unravel(start+k, a.dims) }, ""); err != nil {
			return err
		}
	}
	return nil
}

// decodeValues converts the values in b (item bytes each, in order) to dst.
func decodeValues(dst []float64, b []byte, item int, order binary.ByteOrder) {
	if item == 8 {
		for i := range dst {
			dst[i] = math.Float64frombits(order.Uint64(b[8*i:]))
		}
		return
	}
	for i := range dst {
		dst[i] = float64(math.Float32frombits(order.Uint32(b[4*i:])))
	}
}

// parseDict parses the header of a .npy: a Python dict literal of string
// keys whose values are strings, True, False, None, integers and tuples or
// lists of those.
func parseDict(s string) (map[string]any, error) {
	p := &pyParser{s: s}
	p.space()
	if !p.eat('{') {
		return nil, errors.New("does not start with {")
	}
	d := map[string]any{}
	for {
		p.space()
		if p.eat('}') {
			break
		}
		k, err := p.value(0)
		if err != nil {
			return nil, err
		}
		key, ok := k.(string)
		if !ok {
			return nil, fmt.Errorf("a key is not a string (%v)", k)
		}
		p.space()
		if !p.eat(':') {
			return nil, fmt.Errorf("no ':' after %q", key)
		}
		v, err := p.value(0)
		if err != nil {
			return nil, err
		}
		if _, dup := d[key]; dup {
			return nil, fmt.Errorf("%q is given twice", key)
		}
		d[key] = v
		p.space()
		if p.eat(',') {
			continue
		}
		p.space()
		if !p.eat('}') {
			return nil, fmt.Errorf("expected ',' or '}' at byte %d", p.i)
		}
		break
	}
	if rest := strings.TrimRight(s[p.i:], " \t\n\r\x00"); rest != "" {
		return nil, fmt.Errorf("text after the dict: %q", shortText(rest))
	}
	return d, nil
}

// pyParser reads a Python literal.
type pyParser struct {
	s string
	i int
}

func (p *pyParser) space() {
	for p.i < len(p.s) && strings.IndexByte(" \t\n\r", p.s[p.i]) >= 0 {
		p.i++
	}
}

func (p *pyParser) eat(c byte) bool {
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

// value parses one literal; depth bounds the nesting.
func (p *pyParser) value(depth int) (any, error) {
	if depth > 8 {
		return nil, errors.New("nested too deep")
	}
	p.space()
	if p.i >= len(p.s) {
		return nil, errors.New("ends early")
	}
	switch c := p.s[p.i]; {
	case c == '\'' || c == '"':
		end := strings.IndexByte(p.s[p.i+1:], c)
		if end < 0 {
			return nil, errors.New("a string does not end")
		}
		v := p.s[p.i+1 : p.i+1+end]
		if strings.ContainsRune(v, '\\') {
			return nil, fmt.Errorf("string %q has an escape", v)
		}
		p.i += end + 2
		return v, nil
	case c == '(' || c == '[':
		closer := map[byte]byte{'(': ')', '[': ']'}[c]
		p.i++
		out := []any{}
		for {
			p.space()
			if p.eat(closer) {
				return out, nil
			}
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
			p.space()
			if p.eat(',') {
				continue
			}
			if !p.eat(closer) {
				return nil, fmt.Errorf("expected ',' or '%c' at byte %d", closer, p.i)
			}
			return out, nil
		}
	case c >= '0' && c <= '9':
		j := p.i
		for j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
			j++
		}
		n, err := strconv.ParseInt(p.s[p.i:j], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("integer %s: out of range", p.s[p.i:j])
		}
		p.i = j
		if p.i < len(p.s) && (p.s[p.i] == 'L' || p.s[p.i] == 'l') { // Python 2's long
			p.i++
		}
		return n, nil
	}
	for word, v := range map[string]any{"True": true, "False": false, "None": nil} {
		if strings.HasPrefix(p.s[p.i:], word) {
			p.i += len(word)
			return v, nil
		}
	}
	return nil, fmt.Errorf("unexpected %q at byte %d", p.s[p.i], p.i)
}
