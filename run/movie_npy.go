package run

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"heat/internal/atomicfile"
)

// A snapshot's plane is kept as NumPy .npy (format version 1.0): what any
// Python user reads with np.load, and what heat render --movie draws its
// frames from. The values are the plane the image shows, box-averaged as
// drawn, as little-endian float32 ('<f4', 4 bytes a pixel: 4 MiB for a
// 1024² picture), C order, shape (rows, columns) with row 0 at y = 0 (z = 0
// for a y= or x= cut): imshow(a, origin="lower") shows it as heat does. The
// .json beside it (planeImage) says what the rows and columns are.

// npyMagic starts every .npy file.
const npyMagic = "\x93NUMPY"

// snapshotPlane writes the plane of a snapshot and its description:
// base.npy and base.json.
func snapshotPlane(base string, plane []float64, ny, nx int, p *planeImage) error {
	if err := writeNPY(base+".npy", plane, ny, nx); err != nil {
		return err
	}
	meta, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(base+".json", func(w io.Writer) error {
		_, err := w.Write(append(meta, '\n'))
		return err
	})
}

// writeNPY stores the ny×nx plane at path as a float32 .npy (see above).
func writeNPY(path string, plane []float64, ny, nx int) error {
	if len(plane) != ny*nx {
		return fmt.Errorf("npy %s: %d values for shape (%d, %d)", path, len(plane), ny, nx)
	}
	return atomicfile.Write(path, func(w io.Writer) error {
		if _, err := w.Write(npyHeader("<f4", ny, nx)); err != nil {
			return err
		}
		var buf [4096]byte
		for len(plane) > 0 {
			n := min(len(plane), len(buf)/4)
			for i, v := range plane[:n] {
				binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(float32(v)))
			}
			if _, err := w.Write(buf[:4*n]); err != nil {
				return err
			}
			plane = plane[n:]
		}
		return nil
	})
}

// npyHeader is the preamble of a version 1.0 .npy of a C-order 2D array:
// magic, version, header length and the header dict, padded with spaces and
// a newline so the data start on a 64-byte boundary.
func npyHeader(descr string, ny, nx int) []byte {
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': (%d, %d), }", descr, ny, nx)
	pre := len(npyMagic) + 2 + 2
	total := (pre + len(dict) + 1 + 63) / 64 * 64
	h := make([]byte, 0, total)
	h = append(h, npyMagic...)
	h = append(h, 1, 0)
	h = binary.LittleEndian.AppendUint16(h, uint16(total-pre))
	h = append(h, dict...)
	for len(h) < total-1 {
		h = append(h, ' ')
	}
	return append(h, '\n')
}

// readNPY reads a 2D C-order '<f4' or '<f8' .npy (any format version) as
// float64: its values and shape. Errors name the file.
func readNPY(path string) (plane []float64, ny, nx int, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, 0, err
	}
	bad := func(format string, args ...any) ([]float64, int, int, error) {
		return nil, 0, 0, fmt.Errorf("%s: not a heat plane: %s", path, fmt.Sprintf(format, args...))
	}
	if len(data) < 10 || string(data[:6]) != npyMagic {
		return bad("no NumPy .npy magic")
	}
	var hlen, start int
	switch data[6] {
	case 1:
		hlen, start = int(binary.LittleEndian.Uint16(data[8:])), 10
	case 2, 3:
		if len(data) < 12 {
			return bad("truncated header")
		}
		hlen, start = int(binary.LittleEndian.Uint32(data[8:])), 12
	default:
		return bad("format version %d.%d", data[6], data[7])
	}
	if start+hlen > len(data) {
		return bad("truncated header")
	}
	header := string(data[start : start+hlen])
	body := data[start+hlen:]
	descr, err1 := npyField(header, "descr")
	order, err2 := npyField(header, "fortran_order")
	shape, err3 := npyField(header, "shape")
	if err := errors.Join(err1, err2, err3); err != nil {
		return bad("%v", err)
	}
	if order != "False" {
		return bad("Fortran order")
	}
	dims := strings.Split(strings.TrimSuffix(strings.Trim(shape, "() "), ","), ",")
	if len(dims) != 2 {
		return bad("shape %s is not 2D", shape)
	}
	if ny, err = strconv.Atoi(strings.TrimSpace(dims[0])); err != nil || ny < 1 {
		return bad("shape %s", shape)
	}
	if nx, err = strconv.Atoi(strings.TrimSpace(dims[1])); err != nil || nx < 1 {
		return bad("shape %s", shape)
	}
	size := map[string]int{"'<f4'": 4, "'<f8'": 8}[descr]
	if size == 0 {
		return bad("dtype %s (want '<f4' or '<f8')", descr)
	}
	if ny > math.MaxInt32/nx || len(body) < ny*nx*size {
		return bad("%d bytes of data for shape (%d, %d) of %s", len(body), ny, nx, descr)
	}
	plane = make([]float64, ny*nx)
	for i := range plane {
		if size == 4 {
			plane[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(body[4*i:])))
		} else {
			plane[i] = math.Float64frombits(binary.LittleEndian.Uint64(body[8*i:]))
		}
	}
	return plane, ny, nx, nil
}

// npyField is the value of key in a .npy header dict, as written: "'<f4'",
// "False", "(64, 128)".
func npyField(header, key string) (string, error) {
	i := strings.Index(header, "'"+key+"'")
	if i < 0 {
		return "", fmt.Errorf("no %q in the header", key)
	}
	rest := strings.TrimLeft(header[i+len(key)+2:], " ")
	if !strings.HasPrefix(rest, ":") {
		return "", fmt.Errorf("no value for %q", key)
	}
	rest = strings.TrimLeft(rest[1:], " ")
	end := strings.IndexAny(rest, ",}")
	if strings.HasPrefix(rest, "(") {
		end = strings.IndexByte(rest, ')') + 1
	}
	if end <= 0 {
		return "", fmt.Errorf("no value for %q", key)
	}
	return strings.TrimSpace(rest[:end]), nil
}
