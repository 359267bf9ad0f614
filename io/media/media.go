// Package media turns a description of the media — a uniform conductivity,
// per-cell maps of k and ρc (.npy or Zarr v3 arrays), and material regions
// over them — into per-cell arrays over one rank's box.
//
// The order is fixed: the maps first (the k map, else the uniform Spec.K;
// the ρc map, else 1), then each material in the order given, a later one
// over an earlier one. A material sets what it gives in every cell whose
// centre lies in its region: k (unless KeepK), ρc (if RhoC > 0) and the held
// value — and a material without Fixed makes its cells free again, so a
// later region can punch a free hole into an earlier held one.
//
// Map files are read as files anyone may have replaced (heat/internal/safefile):
// a FIFO or a device in place of a map is refused, so is a file whose size
// its header does not account for, and nothing is allocated beyond what
// the grid's shape implies. A map may be a link to a regular file,
// followed once; nothing inside a Zarr folder is reached through a link. A
// heat checkpoint is read through the checkpoint package, with its checks
// (ckpt.go). Fill reads of each map only what its box needs: of a .npy the
// rows of the box, of a Zarr array the chunks (of a sharded one the index
// and inner chunks) that intersect it.
//
// It is not a solver: what k = 0 (a hole) or a held cell mean for the
// discrete equation is the operator's business.
package media

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"heat/field"
	"heat/internal/hugemem"
)

// Region kinds.
const (
	Box       = "box"        // Lo <= x < Hi per axis
	Ball      = "ball"       // |x − Center|² <= Radius² (a disc in 2D)
	Cylinder  = "cylinder"   // 3D: within Radius of the line through Center along Axis
	HalfSpace = "half-space" // (x − Point)·Normal >= 0
)

// Kinds are the region kinds, in the order messages list them.
var Kinds = []string{Box, Ball, Cylinder, HalfSpace}

// Region is a set of points in physical coordinates, C order (slowest axis
// first, as grid.shape). A cell belongs to it when its centre does.
//
//	box         Lo, Hi: lo[a] <= x[a] < hi[a] on every axis
//	ball        Center, Radius: |x − center|² <= radius² (a disc in 2D)
//	cylinder    Center, Radius, Axis (the C-order index of the axis it runs
//	            along, 3D only): the other two coordinates within radius of
//	            center's; it runs through the whole domain along Axis
//	half-space  Point, Normal: (x − point)·normal >= 0
type Region struct {
	Kind                          string
	Lo, Hi, Center, Point, Normal []float64
	Radius                        float64
	Axis                          int
}

// Material is one region of the media and what it sets there.
type Material struct {
	Name   string // optional; in messages
	Region Region
	// K is the conductivity, finite and >= 0; 0 is an insulating hole.
	K float64
	// KeepK leaves k as it lies under (the maps, or earlier materials): a
	// material that only holds cells or sets ρc.
	KeepK bool
	// RhoC is the volumetric heat capacity, finite and > 0; 0 keeps what
	// lies under.
	RhoC float64
	// Fixed, when set, holds the cells at this value; nil makes them free
	// (even where an earlier material held them).
	Fixed *float64
}

// Spec is the media of one run.
type Spec struct {
	Shape  []int     // global cells, C order (2 or 3 axes)
	Length []float64 // physical extent per axis; nil: 1.0 per axis. The centre of global cell i along a is (i+0.5)·(Length[a]/Shape[a]), field.Geometry's Centre
	K      float64   // uniform conductivity under everything (equation.alpha)
	// KMap and RhoCMap are paths of per-cell maps of k and ρc ("" = none):
	// a .npy file or a Zarr v3 array folder (such as a heat checkpoint's
	// u), or a Zarr group — a heat checkpoint folder — whose array k (for
	// KMap) or rho_c (for RhoCMap) is taken. A relative path is relative
	// to the current directory.
	KMap, RhoCMap string
	// FillMissing reads the chunks a Zarr map does not store as its
	// fill_value (maps.missing = "fill"); false makes such a chunk an error
	// naming it, so that a chunk lost in a copy is not read as a silent
	// block of fill values (an insulating hole, for fill 0).
	FillMissing bool
	Materials   []Material // later entries over earlier ones, over the maps
}

// Uniform reports whether the spec is the constant case: no maps and no
// materials, so k = K and ρc = 1 everywhere and no cell is held.
func (s *Spec) Uniform() bool {
	return s.KMap == "" && s.RhoCMap == "" && len(s.Materials) == 0
}

// Cells are the per-cell values over one box, C order (last axis fastest),
// each of the box's cell count.
type Cells struct {
	K, RhoC []float64
	Fixed   []float64 // the held value; NaN where the cell is not held
}

// BytesPerCell is what the media add to a run's memory per cell of an
// nd-axis grid: the run keeps per cell one array of a (ρc/dt, the
// diagonal term) or s (its inverse), one array of face coefficients per
// axis, and a mask (holes and held cells), each 8 bytes a cell — 8·(nd+2).
// The Cells of Fill are transient and not counted.
func BytesPerCell(nd int) int { return 8 * (nd + 2) }

// The map keys as the config names them, in messages.
const (
	KeyK    = "maps.k"
	KeyRhoC = "maps.rho_c"
)

// MapError is a mistake in a map file: Key is KeyK or KeyRhoC, Path the
// file as given, Msg what is wrong, with the numbers. Its text is
// "media: maps.k: Msg" (Msg starts with the path). Cell, when the mistake
// is one cell's value, is that cell's global index (C order), so that
// ranks reading their boxes can agree on the first one.
type MapError struct {
	Key, Path, Msg string
	Cell           []int
}

func (e *MapError) Error() string { return "media: " + e.Key + ": " + e.Msg }

// FieldError is a mistake in one field of a material: Index is its
// position in Spec.Materials (0-based), Field the config key of the field
// ("radius", "lo", "k", …).
type FieldError struct {
	Index int
	Name  string // the material's name, if any
	Field string
	Msg   string
}

// Key is the dotted config key of the field, such as material[1].radius.
func (e *FieldError) Key() string { return fmt.Sprintf("material[%d].%s", e.Index, e.Field) }

func (e *FieldError) Error() string {
	name := ""
	if e.Name != "" {
		name = fmt.Sprintf(" (%q)", e.Name)
	}
	return fmt.Sprintf("media: %s%s: %s", e.Key(), name, e.Msg)
}

// Check validates the spec without filling: CheckHeaders, then
// CheckValues. Errors are *MapError, *FieldError or, for the grid, plain
// errors.
func (s *Spec) Check() error {
	if err := s.CheckHeaders(); err != nil {
		return err
	}
	return s.CheckValues(context.Background())
}

// CheckHeaders is the cheap part of Check, which reads no map's values:
// the grid, every material (a known kind with the coordinates of its kind,
// one per axis; radius > 0; k finite and >= 0; ρc finite and > 0 where
// given; a held value finite; names unique where given) and the map files'
// headers (they exist, have the grid's shape and a supported data type).
func (s *Spec) CheckHeaders() error {
	if err := s.checkGrid(); err != nil {
		return err
	}
	if err := s.checkMaterials(); err != nil {
		return err
	}
	for _, m := range s.maps() {
		arr, err := openMap(m, s.Shape)
		if err != nil {
			return err
		}
		arr.close()
	}
	return nil
}

// CheckValues reads every value of the map files and checks it (k finite
// and >= 0, ρc finite and > 0): a one-off pass over each whole file, one
// row or chunk at a time, which a large map makes long — so it is apart
// from CheckHeaders, and stops at the next block once ctx is done,
// returning context.Cause(ctx). The first bad value is a *MapError naming
// the file and the cell.
func (s *Spec) CheckValues(ctx context.Context) error {
	for _, m := range s.maps() {
		if err := checkMap(ctx, m, s.Shape); err != nil {
			return err
		}
	}
	return nil
}

// mapRef is one map of the spec: its key, path and value rule; array is
// the array a Zarr group (a heat checkpoint) stands for ("": the map's
// name, k or rho_c); fill says whether a Zarr array's chunks that are not
// stored read as its fill value (else they are errors).
type mapRef struct {
	key, path string
	rule      rule
	array     string
	fill      bool
}

// maps are the maps the spec names.
func (s *Spec) maps() []mapRef {
	var out []mapRef
	if s.KMap != "" {
		out = append(out, mapRef{key: KeyK, path: s.KMap, rule: kRule, fill: s.FillMissing})
	}
	if s.RhoCMap != "" {
		out = append(out, mapRef{key: KeyRhoC, path: s.RhoCMap, rule: rhoCRule, fill: s.FillMissing})
	}
	return out
}

// rule is what a map's values must be.
type rule struct {
	ok   func(float64) bool
	what string // "k must be finite and >= 0"
}

var (
	kRule    = rule{func(v float64) bool { return v >= 0 && !math.IsInf(v, 1) }, "k must be finite and >= 0"}
	rhoCRule = rule{func(v float64) bool { return v > 0 && !math.IsInf(v, 1) }, "rho_c must be finite and > 0"}
)

func (s *Spec) checkGrid() error {
	nd := len(s.Shape)
	if nd != 2 && nd != 3 {
		return fmt.Errorf("media: the grid has %d axes %v; want 2 or 3", nd, s.Shape)
	}
	for _, n := range s.Shape {
		if n < 1 {
			return fmt.Errorf("media: the grid shape %v has an axis without cells", s.Shape)
		}
	}
	if len(s.Length) != 0 && len(s.Length) != nd {
		return fmt.Errorf("media: %d lengths %v for a grid of %d axes", len(s.Length), s.Length, nd)
	}
	for _, l := range s.Length {
		if !(l > 0) || math.IsInf(l, 1) {
			return fmt.Errorf("media: the grid lengths %v must be finite and positive", s.Length)
		}
	}
	if !(s.K >= 0) || math.IsInf(s.K, 1) {
		return fmt.Errorf("media: the uniform k %s must be finite and >= 0", FormatNumber(s.K))
	}
	return nil
}

// checkMaterials validates every material against the grid.
func (s *Spec) checkMaterials() error {
	nd := len(s.Shape)
	names := map[string]int{}
	for i := range s.Materials {
		m := &s.Materials[i]
		bad := func(field, format string, args ...any) error {
			return &FieldError{Index: i, Name: m.Name, Field: field, Msg: fmt.Sprintf(format, args...)}
		}
		if m.Name != "" {
			if j, ok := names[m.Name]; ok {
				return bad("name", "%q is also the name of material[%d]; names must be unique", m.Name, j)
			}
			names[m.Name] = i
		}
		if err := m.Region.check(nd, bad); err != nil {
			return err
		}
		if why := s.coversNone(&m.Region); why != "" {
			return bad("region", "covers no cell centre, so it would set nothing: %s", why)
		}
		if !m.KeepK && (!(m.K >= 0) || math.IsInf(m.K, 1)) {
			return bad("k", "must be finite and >= 0; 0 is an insulating hole (got %s)", FormatNumber(m.K))
		}
		if !(m.RhoC >= 0) || math.IsInf(m.RhoC, 1) {
			return bad("rho_c", "must be finite and > 0 (got %s)", FormatNumber(m.RhoC))
		}
		if m.Fixed != nil && (math.IsNaN(*m.Fixed) || math.IsInf(*m.Fixed, 0)) {
			return bad("fixed", "must be finite (got %s)", FormatNumber(*m.Fixed))
		}
	}
	return nil
}

// check validates a region of an nd-axis grid; bad makes the error of a
// field.
func (r *Region) check(nd int, bad func(field, format string, args ...any) error) error {
	if !slices.Contains(Kinds, r.Kind) {
		return bad("region", "must be %s (got %q)", oneOf(Kinds), r.Kind)
	}
	type field struct {
		name string
		xs   []float64
	}
	coords := []field{{"lo", r.Lo}, {"hi", r.Hi}, {"center", r.Center}, {"point", r.Point}, {"normal", r.Normal}}
	uses := map[string][]string{
		Box:       {"lo", "hi"},
		Ball:      {"center", "radius"},
		Cylinder:  {"center", "radius", "axis"},
		HalfSpace: {"point", "normal"},
	}[r.Kind]
	takes := strings.Join(uses, ", ")
	for _, f := range coords {
		used := slices.Contains(uses, f.name)
		switch {
		case !used && len(f.xs) > 0:
			return bad(f.name, "a %s takes %s; %s %s would be ignored", r.Kind, takes, f.name, nums(f.xs))
		case used && len(f.xs) != nd:
			return bad(f.name, "a %s needs %s with one coordinate per axis, %d for this grid, C order (got %s)", r.Kind, f.name, nd, nums(f.xs))
		}
		for _, x := range f.xs {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return bad(f.name, "must hold finite numbers (got %s)", nums(f.xs))
			}
		}
	}
	usesRadius := slices.Contains(uses, "radius")
	switch {
	case !usesRadius && r.Radius != 0:
		return bad("radius", "a %s takes %s; radius %s would be ignored", r.Kind, takes, FormatNumber(r.Radius))
	case usesRadius && (!(r.Radius > 0) || math.IsInf(r.Radius, 1)):
		return bad("radius", "must be finite and > 0 (got %s)", FormatNumber(r.Radius))
	}
	switch {
	case r.Kind != Cylinder && r.Axis != 0:
		return bad("axis", "a %s takes %s; axis %d would be ignored", r.Kind, takes, r.Axis)
	case r.Kind == Cylinder && nd != 3:
		return bad("region", "a cylinder needs a 3D grid; in 2D a disc is a ball")
	case r.Kind == Cylinder && (r.Axis < 0 || r.Axis >= nd):
		return bad("axis", "must be the C-order index of the axis the cylinder runs along, 0 (z), 1 (y) or 2 (x) (got %d)", r.Axis)
	}
	switch r.Kind {
	case Box:
		for a := range nd {
			if !(r.Lo[a] < r.Hi[a]) {
				return bad("hi", "must exceed lo on every axis (lo %s, hi %s)", nums(r.Lo), nums(r.Hi))
			}
		}
	case HalfSpace:
		if !slices.ContainsFunc(r.Normal, func(x float64) bool { return x != 0 }) {
			return bad("normal", "must not be zero (got %s)", nums(r.Normal))
		}
	}
	return nil
}

// axisNames are the names of the axes of a grid of 2 and 3 axes, C order.
var axisNames = map[int][]string{2: {"y", "x"}, 3: {"z", "y", "x"}}

// geometry is the grid of the spec: its cell sizes and centres, those
// Fill places the materials' regions over.
func (s *Spec) geometry() field.Geometry { return field.Geometry{Shape: s.Shape, Length: s.Length} }

// coversNone says why region r (checked) holds no cell centre of the grid,
// or "" when it holds one. It finds the one cell that r holds if it holds
// any — per axis the first centre at or past lo (box), the centre nearest
// the axis or centre (ball, cylinder), the one furthest along the normal
// (half-space) — and asks Contains of it: exact, in O(axes).
func (s *Spec) coversNone(r *Region) string {
	nd, geo := len(s.Shape), s.geometry()
	x := make([]float64, nd)
	for a, n := range s.Shape {
		switch r.Kind {
		case Box:
			i := s.firstFrom(a, r.Lo[a])
			if i == n || !(geo.Centre(a, i) < r.Hi[a]) {
				return fmt.Sprintf("along %s no cell centre lies in [%s, %s): %s", axisNames[nd][a],
					FormatNumber(r.Lo[a]), FormatNumber(r.Hi[a]), s.centresAround(a, i))
			}
			x[a] = geo.Centre(a, i)
		case Ball, Cylinder:
			x[a] = geo.Centre(a, s.nearest(a, r.Center[a]))
		case HalfSpace:
			i := 0
			if r.Normal[a] > 0 {
				i = n - 1
			}
			x[a] = geo.Centre(a, i)
		}
	}
	if r.Contains(x) {
		return ""
	}
	switch r.Kind {
	case HalfSpace:
		return fmt.Sprintf("every cell centre lies behind the plane through %s with normal %s (cell size %s)", nums(r.Point), nums(r.Normal), nums(geo.Spacing()))
	case Cylinder:
		x[r.Axis] = r.Center[r.Axis]
	}
	return fmt.Sprintf("the cell centre nearest %s is %s, at distance %s > radius %s (cell size %s)", nums(r.Center), nums(x),
		FormatNumber(math.Sqrt(dist2(x, r.Center, -1))), FormatNumber(r.Radius), nums(geo.Spacing()))
}

// firstFrom is the first cell along axis a whose centre is >= v; the
// axis's cell count when none is.
func (s *Spec) firstFrom(a int, v float64) int {
	n, geo := s.Shape[a], s.geometry()
	i := int(max(0, min(float64(n), math.Floor(v/geo.H(a)-0.5))))
	for i > 0 && geo.Centre(a, i-1) >= v {
		i--
	}
	for i < n && geo.Centre(a, i) < v {
		i++
	}
	return i
}

// nearest is the cell along axis a whose centre is nearest v.
func (s *Spec) nearest(a int, v float64) int {
	n, geo := s.Shape[a], s.geometry()
	j := int(max(0, min(float64(n-1), math.Floor(v/geo.H(a)-0.5))))
	best := j
	for i := max(0, j-1); i <= min(n-1, j+2); i++ {
		if d, e := geo.Centre(a, i)-v, geo.Centre(a, best)-v; float64(d*d) < float64(e*e) {
			best = i
		}
	}
	return best
}

// centresAround names the cell centres along axis a on either side of
// cell i (the first at or past a box's lo) and the cell size.
func (s *Spec) centresAround(a, i int) string {
	geo := s.geometry()
	h := FormatNumber(geo.H(a))
	switch {
	case i == 0:
		return fmt.Sprintf("the first centre is %s (cells %s wide)", FormatNumber(geo.Centre(a, 0)), h)
	case i == s.Shape[a]:
		return fmt.Sprintf("the last centre is %s (cells %s wide)", FormatNumber(geo.Centre(a, i-1)), h)
	}
	return fmt.Sprintf("the centres on either side are %s and %s (cells %s wide)", FormatNumber(geo.Centre(a, i-1)), FormatNumber(geo.Centre(a, i)), h)
}

// Fill evaluates the spec over the box [lo, hi) of global cell indices,
// C order: the maps' values of the box (read from the files: only the part
// the box needs), then the materials in order. Values of the maps in the
// box that are not valid (k finite and >= 0, ρc finite and > 0) are
// errors naming the file and the cell; the rest of the file is not read.
func (s *Spec) Fill(lo, hi []int) (*Cells, error) {
	if err := s.checkGrid(); err != nil {
		return nil, err
	}
	nd := len(s.Shape)
	if len(lo) != nd || len(hi) != nd {
		return nil, fmt.Errorf("media: box %v to %v for a grid of %d axes", lo, hi, nd)
	}
	n := 1
	for a := range nd {
		if lo[a] < 0 || lo[a] > hi[a] || hi[a] > s.Shape[a] {
			return nil, fmt.Errorf("media: box %v to %v is not inside the grid %v", lo, hi, s.Shape)
		}
		n *= hi[a] - lo[a]
	}
	if err := s.checkMaterials(); err != nil {
		return nil, err
	}
	c := &Cells{K: hugemem.Floats(n), RhoC: hugemem.Floats(n), Fixed: hugemem.Floats(n)}
	fill(c.K, s.K)
	fill(c.RhoC, 1)
	fill(c.Fixed, math.NaN())
	for _, m := range s.maps() {
		dst := c.K
		if m.key == KeyRhoC {
			dst = c.RhoC
		}
		if err := readMap(m, s.Shape, lo, hi, dst); err != nil {
			return nil, err
		}
	}
	if len(s.Materials) == 0 || n == 0 {
		return c, nil
	}
	// The centres of the box's cells per axis.
	centres, geo := make([][]float64, nd), s.geometry()
	for a := range nd {
		centres[a] = make([]float64, hi[a]-lo[a])
		for i := range centres[a] {
			centres[a][i] = geo.Centre(a, lo[a]+i)
		}
	}
	x := make([]float64, nd)
	for mi := range s.Materials {
		m := &s.Materials[mi]
		fixed := math.NaN()
		if m.Fixed != nil {
			fixed = *m.Fixed
		}
		idx := make([]int, nd)
		for cell := range n {
			for a := range nd {
				x[a] = centres[a][idx[a]]
			}
			if m.Region.Contains(x) {
				if !m.KeepK {
					c.K[cell] = m.K
				}
				if m.RhoC > 0 {
					c.RhoC[cell] = m.RhoC
				}
				c.Fixed[cell] = fixed
			}
			for a := nd - 1; a >= 0; a-- {
				if idx[a]++; idx[a] < len(centres[a]) {
					break
				}
				idx[a] = 0
			}
		}
	}
	return c, nil
}

// Contains reports whether the point x (physical coordinates, C order, one
// per axis of the region) lies in the region.
func (r *Region) Contains(x []float64) bool {
	switch r.Kind {
	case Box:
		for a, v := range x {
			if v < r.Lo[a] || v >= r.Hi[a] {
				return false
			}
		}
		return true
	case Ball:
		return dist2(x, r.Center, -1) <= r.Radius*r.Radius
	case Cylinder:
		return dist2(x, r.Center, r.Axis) <= r.Radius*r.Radius
	case HalfSpace:
		dot := 0.0
		for a, v := range x {
			dot += float64((v - r.Point[a]) * r.Normal[a])
		}
		return dot >= 0
	}
	return false
}

// dist2 is |x − c|² over every axis but skip.
func dist2(x, c []float64, skip int) float64 {
	d := 0.0
	for a, v := range x {
		if a != skip {
			d += float64((v - c[a]) * (v - c[a]))
		}
	}
	return d
}

func fill(xs []float64, v float64) {
	for i := range xs {
		xs[i] = v
	}
}

// FormatNumber writes a float for a message as TOML spells it, nan and
// inf included (io/config writes its values with it too).
func FormatNumber(v float64) string {
	switch {
	case math.IsNaN(v):
		return "nan"
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

func nums(xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = FormatNumber(x)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// oneOf lists kinds for a message: "a", "b" or "c".
func oneOf(kinds []string) string {
	q := make([]string, len(kinds))
	for i, s := range kinds {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// errMissing marks a chunk that is not stored (its values are the fill
// value).
var errMissing = errors.New("missing")

// Coverage is what one material sets on the whole grid: the cells whose
// centre its region holds (Region), those still its own under the
// materials after it (Owned), and the extent of those (Lo, Hi: the faces
// of the outermost owned cells per axis, physical coordinates, C order;
// nil when it owns none).
type Coverage struct {
	Region, Owned int
	Lo, Hi        []float64
}

// MaxCoverageCells bounds the grids Coverage scans (a pass over every cell
// for every material; 2^24 cells, a 4096² or 256³ grid, take about a
// second).
const MaxCoverageCells = 1 << 24

// Coverage is each material's Coverage, in order; ok is false (and nil)
// for a grid of more than MaxCoverageCells cells.
func (s *Spec) Coverage() (cov []Coverage, ok bool) {
	nd, geo := len(s.Shape), s.geometry()
	n := 1
	for _, c := range s.Shape {
		n *= c
		if n > MaxCoverageCells {
			return nil, false
		}
	}
	cov = make([]Coverage, len(s.Materials))
	lo, hi := make([][]int, len(cov)), make([][]int, len(cov))
	x, idx := make([]float64, nd), make([]int, nd)
	for cell := range n {
		geo.Cell(cell, idx)
		for a := range nd {
			x[a] = geo.Centre(a, idx[a])
		}
		owner := -1
		for mi := range s.Materials {
			if s.Materials[mi].Region.Contains(x) {
				cov[mi].Region++
				owner = mi
			}
		}
		if owner < 0 {
			continue
		}
		cov[owner].Owned++
		if lo[owner] == nil {
			lo[owner], hi[owner] = slices.Clone(idx), slices.Clone(idx)
		}
		for a, i := range idx {
			lo[owner][a], hi[owner][a] = min(lo[owner][a], i), max(hi[owner][a], i)
		}
	}
	for mi := range cov {
		if lo[mi] == nil {
			continue
		}
		cov[mi].Lo, cov[mi].Hi = make([]float64, nd), make([]float64, nd)
		for a := range nd {
			cov[mi].Lo[a] = float64(lo[mi][a]) * geo.H(a)
			cov[mi].Hi[a] = float64(hi[mi][a]+1) * geo.H(a)
		}
	}
	return cov, true
}

// Owner is which material a point (physical coordinates, C order) lies in:
// 1 + the index of the last material whose region contains it (the one
// whose values it takes), 0 for none (the maps or the uniform medium).
// Pictures outline where it changes.
func (s *Spec) Owner(x []float64) int {
	for i := len(s.Materials) - 1; i >= 0; i-- {
		if s.Materials[i].Region.Contains(x) {
			return i + 1
		}
	}
	return 0
}
