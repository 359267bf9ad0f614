package heatmap

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// DefaultSlice is the plane of a 3D field that an empty spec selects.
const DefaultSlice = "z=mid"

// Slice cuts the 2D plane that spec names out of a field of the given shape
// (C order, [nz, ny, nx]), ready for Render.
//
// spec is "AXIS=AT" with AXIS one of z, y, x and AT one of
//   - "mid": index n/2 along the axis,
//   - an integer index from 0 to n-1,
//   - a fraction of the axis when it has a '.', from 0 to 1: index
//     floor(f*n), with 1.0 meaning the last cell.
//
// "" means DefaultSlice. The plane keeps the remaining axes in C order, so its
// rows run along the slower one: z=k gives [ny, nx], y=j gives [nz, nx],
// x=i gives [nz, ny]; Render then draws the first of them upwards. label
// names the plane for a title, e.g. "z=32". The plane is a copy.
//
// A 2D field ([ny, nx]) is returned as is (not copied), whatever spec says,
// with an empty label, so callers can pass every field through Slice.
func Slice(field []float64, shape []int, spec string) (plane []float64, ny, nx int, label string, err error) {
	n := 1
	for _, s := range shape {
		if s < 1 {
			return nil, 0, 0, "", fmt.Errorf("heatmap: slice: shape %v must be positive", shape)
		}
		n *= s
	}
	if len(field) != n {
		return nil, 0, 0, "", fmt.Errorf("heatmap: slice: field has %d values, shape %v needs %d", len(field), shape, n)
	}
	switch len(shape) {
	case 2:
		return field, shape[0], shape[1], "", nil
	case 3:
	default:
		return nil, 0, 0, "", fmt.Errorf("heatmap: slice: shape %v must have 2 or 3 axes", shape)
	}

	axis, at, err := parseSpec(spec, shape)
	if err != nil {
		return nil, 0, 0, "", err
	}
	nz, sy, sx := shape[0], shape[1], shape[2]
	switch axis {
	case 0: // a contiguous [ny, nx] block
		plane = append([]float64(nil), field[at*sy*sx:(at+1)*sy*sx]...)
		ny, nx = sy, sx
	case 1: // row j of every z layer
		plane = make([]float64, 0, nz*sx)
		for k := range nz {
			row := (k*sy + at) * sx
			plane = append(plane, field[row:row+sx]...)
		}
		ny, nx = nz, sx
	case 2: // column i of every z layer, one value per y
		plane = make([]float64, 0, nz*sy)
		for k := range nz {
			for j := range sy {
				plane = append(plane, field[(k*sy+j)*sx+at])
			}
		}
		ny, nx = nz, sy
	}
	return plane, ny, nx, fmt.Sprintf("%s=%d", axisNames[axis], at), nil
}

var axisNames = [3]string{"z", "y", "x"}

// parseSpec resolves spec against a 3D shape to an axis (0 = z, 1 = y, 2 = x)
// and an index along it; its errors name the spec and the valid range.
func parseSpec(spec string, shape []int) (axis, at int, err error) {
	s := strings.TrimSpace(spec)
	if s == "" {
		s = DefaultSlice
	}
	axis, at, err = ParseCoord(s, shape)
	if err != nil {
		return 0, 0, fmt.Errorf("heatmap: slice %q: %w", spec, err)
	}
	return axis, at, nil
}

// ParseCoord resolves AXIS=AT against shape (2D: axes y, x; 3D: z, y, x)
// to the axis and a cell index: AT is mid (n/2), an index from 0 to n−1,
// or a fraction of the axis (with a '.') from 0 to 1, cell floor(f·n)
// (1.0: the last). Slices (--slice) and line-outs (--line) share it.
func ParseCoord(s string, shape []int) (axis, at int, err error) {
	names := axisNames[3-len(shape):]
	name, val, ok := strings.Cut(strings.TrimSpace(s), "=")
	name, val = strings.TrimSpace(name), strings.TrimSpace(val)
	axis = slices.Index(names, name)
	if !ok || axis < 0 {
		return 0, 0, fmt.Errorf("want AXIS=AT with AXIS one of %s and AT mid, a cell index or a fraction like 0.5 (got %q)", strings.Join(names, ", "), s)
	}
	n := shape[axis]
	switch {
	case val == "mid":
		return axis, n / 2, nil
	case strings.Contains(val, "."):
		f, perr := strconv.ParseFloat(val, 64)
		if perr != nil || !(f >= 0 && f <= 1) {
			return 0, 0, fmt.Errorf("%s=%s is outside the domain: a fraction of its length is from 0 to 1", name, val)
		}
		return axis, min(int(f*float64(n)), n-1), nil
	}
	i, perr := strconv.Atoi(val)
	if perr != nil {
		return 0, 0, fmt.Errorf("%s=%s: want mid, a cell index from 0 to %d, or a fraction like 0.5", name, val, n-1)
	}
	if i < 0 || i >= n {
		return 0, 0, fmt.Errorf("%s=%d is outside the domain: a cell index along %s is from 0 to %d (or a fraction like 0.5)", name, i, name, n-1)
	}
	return axis, i, nil
}

// ParseSlice resolves spec against a 3D shape to the axis it cuts (0 = z,
// 1 = y, 2 = x), the index along it and a label such as "z=32", as Slice
// does, for callers that cut the plane themselves (out of a distributed
// field, say).
func ParseSlice(spec string, shape []int) (axis, at int, label string, err error) {
	axis, at, err = parseSpec(spec, shape)
	if err != nil {
		return 0, 0, "", err
	}
	return axis, at, fmt.Sprintf("%s=%d", axisNames[axis], at), nil
}

// Factor is the integer downsampling factor Render uses for a plane of ny
// by nx cells drawn at least maxPixels (0: DefaultMaxPixels) on its long
// side: the largest that keeps that side at maxPixels or more, so a plane
// of fewer than twice maxPixels cells is drawn cell for cell and a larger
// one between maxPixels and twice it.
func Factor(ny, nx, maxPixels int) int {
	if maxPixels <= 0 {
		maxPixels = DefaultMaxPixels
	}
	return max(1, max(ny, nx)/maxPixels)
}
