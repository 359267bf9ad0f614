package config

import "heat/field"

// Config is one run's resolved input. Field names follow the TOML keys; the
// same names appear in the run report (JSON) and in checkpoints.
type Config struct {
	Grid       Grid       `toml:"grid" json:"grid"`
	Equation   Equation   `toml:"equation" json:"equation"`
	Run        Run        `toml:"run" json:"run"`
	Boundary   Boundary   `toml:"boundary" json:"boundary"`
	Initial    Profile    `toml:"initial" json:"initial"`
	Source     Profile    `toml:"source" json:"source"`
	Parallel   Parallel   `toml:"parallel" json:"parallel"`
	Output     Output     `toml:"output" json:"output"`
	Checkpoint Checkpoint `toml:"checkpoint" json:"checkpoint"`
	Multigrid  Multigrid  `toml:"multigrid" json:"multigrid"`
	Maps       Maps       `toml:"maps" json:"maps"`
	Material   []Material `toml:"material" json:"material,omitempty"` // [[material]] tables, later over earlier
}

// Grid is the global mesh: cell counts and physical extent per axis, C order
// (slowest axis first): [ny, nx] or [nz, ny, nx].
type Grid struct {
	Shape  []int     `toml:"shape" json:"shape"`   // at most MaxCells (2^40) cells
	Length []float64 `toml:"length" json:"length"` // default 1.0 per axis; cells (length/shape) of about 1e-154 to 1e154
	Ghost  int       `toml:"ghost" json:"ghost"`   // ghost layers per side, >= 1
}

// Geometry is the grid's shape and lengths, whose cell sizes and centres
// the run, its outputs and its checks take from one place.
func (g Grid) Geometry() field.Geometry { return field.Geometry{Shape: g.Shape, Length: g.Length} }

// Equation selects what is solved.
type Equation struct {
	Kind   string  `toml:"kind" json:"kind"`     // "heat" (∂u/∂t = α∇²u + f) or "poisson" (∇²u = f)
	Solver string  `toml:"solver" json:"solver"` // poisson: "multigrid", "mgcg" (CG preconditioned by one cycle) or "jacobi" (weighted Jacobi sweeps)
	Scheme string  `toml:"scheme" json:"scheme"` // heat: "explicit", "backward-euler" or "crank-nicolson"
	Alpha  float64 `toml:"alpha" json:"alpha"`   // diffusivity (heat)
	DT     float64 `toml:"dt" json:"dt"`         // time step (heat); explicit: 0 picks 0.9 × the stability limit
}

// Multigrid tunes the multigrid solver (Poisson, implicit heat steps).
type Multigrid struct {
	Smoother      string `toml:"smoother" json:"smoother"`           // "chebyshev", "jacobi" or "rbgs"
	Cycle         string `toml:"cycle" json:"cycle"`                 // "f", "w", "v", or "fmg" (one full multigrid cycle, then V-cycles)
	Pre           int    `toml:"pre" json:"pre"`                     // smoothing sweeps before the coarse correction; 0: the smoother's default
	Post          int    `toml:"post" json:"post"`                   // … and after it
	Levels        int    `toml:"levels" json:"levels"`               // levels, the fine grid included; 0: as many as the grid allows
	Interpolation string `toml:"interpolation" json:"interpolation"` // prolongation: "linear" or "constant"
	MaxCycles     int    `toml:"max_cycles" json:"max_cycles"`       // implicit heat: cycles per step before the run fails
	// AgglomerateBelow: once a rank's box of the next level would have
	// fewer cells along an axis, the ranks hand their boxes on; GatherCells:
	// a level of at most this many cells goes to rank 0 whole, a larger one
	// to one rank of each group of neighbours. 0: 32 and 16384.
	AgglomerateBelow int `toml:"agglomerate_below" json:"agglomerate_below"`
	GatherCells      int `toml:"gather_cells" json:"gather_cells"`
}

// Run is how long to run and how often to check.
type Run struct {
	Steps      int     `toml:"steps" json:"steps"`             // heat: time steps; poisson: iteration (multigrid: cycle) cap
	TEnd       float64 `toml:"t_end" json:"t_end"`             // heat: the time to stop at (sets steps; the last step shortened); 0: none. With steps given too, the first of the two stops the run (EndsAtTEnd)
	Tolerance  float64 `toml:"tolerance" json:"tolerance"`     // multigrid: relative residual ‖f−Au‖∞/‖f‖∞ to stop at; mgcg: componentwise backward error max_i |f−Au|_i/((|A||u|)_i+|f_i|); jacobi: max|Δu|; 0: 1e-10, 1e-12 and 1e-6
	CheckEvery int     `toml:"check_every" json:"check_every"` // steps between residual checks / progress
}

// Boundary is the default condition for every face plus optional per-face
// overrides. Kinds: "dirichlet" (value: u on the face), "neumann" (value:
// the flux k∂u/∂n, n outward; 0 insulates), "robin" (h, and value: the
// ambient; −k∂u/∂n = h(u_face − value)), "periodic" (both faces of an
// axis). A value (and h) is a number, an expression of x, y, z, t or a
// time table (Value).
type Boundary struct {
	Kind  string `toml:"kind" json:"kind"`
	Value Value  `toml:"value" json:"value"`
	H     *Value `toml:"h,omitempty" json:"h,omitempty"` // robin: the heat-transfer coefficient, >= 0 (a number, a constant expression, every row of a table)
	XLo   *Face  `toml:"x_lo" json:"x_lo,omitempty"`
	XHi   *Face  `toml:"x_hi" json:"x_hi,omitempty"`
	YLo   *Face  `toml:"y_lo" json:"y_lo,omitempty"`
	YHi   *Face  `toml:"y_hi" json:"y_hi,omitempty"`
	ZLo   *Face  `toml:"z_lo" json:"z_lo,omitempty"`
	ZHi   *Face  `toml:"z_hi" json:"z_hi,omitempty"`
}

// Face overrides the boundary condition of one face; unset fields inherit
// the [boundary] defaults.
type Face struct {
	Kind  string `toml:"kind,omitempty" json:"kind,omitempty"`
	Value *Value `toml:"value" json:"value,omitempty"`
	H     *Value `toml:"h,omitempty" json:"h,omitempty"` // robin: the heat-transfer coefficient, >= 0 (a number, a constant expression, every row of a table)
}

// Profile is a field defined by a formula over physical coordinates: the
// initial condition and the source term share it. Kinds:
//
//	none      zero everywhere (source only)
//	constant  value
//	hotspot   value inside the disc/ball (center, radius), background outside
//	gaussian  background + value·exp(−|x−center|²/(2·radius²))
//	sine      background + value·Π sin(mode[a]·π·x[a]/length[a])
//	random    background + value·U[0,1), seeded by seed and the global cell index
//	expr      the formula expr of x, y, z and t (package heat/io/expr); an
//	          initial field is taken at t = 0
//	file      (initial only) the field in path: a .npy, a Zarr v3 array or a
//	          heat checkpoint (its u; a checkpoints folder, its latest or a
//	          run's output folder name the newest); relative to the current
//	          directory, as map paths are
type Profile struct {
	Kind       string    `toml:"kind" json:"kind"`
	Value      float64   `toml:"value" json:"value"`
	Background float64   `toml:"background" json:"background"`
	Center     []float64 `toml:"center" json:"center,omitempty"` // physical coordinates, C order; default: domain centre
	Radius     float64   `toml:"radius" json:"radius"`
	Mode       []int     `toml:"mode" json:"mode,omitempty"` // wave numbers per axis, C order
	Seed       int64     `toml:"seed" json:"seed"`
	Expr       string    `toml:"expr,omitempty" json:"expr,omitempty"` // kind expr: the formula (brackets at most expr.MaxDepth = 200 deep, at most expr.MaxLength = 64 KiB; constant: finite)
	Path       string    `toml:"path,omitempty" json:"path,omitempty"` // kind file: the field's file or checkpoint
	// Amplitude (the source only, heat only) multiplies the source in
	// time: a number, an expression of t, or a time table {table = "…"}.
	Amplitude *Value `toml:"amplitude,omitempty" json:"amplitude,omitempty"`
}

// Parallel is how the work is split.
type Parallel struct {
	Ranks   int   `toml:"ranks" json:"ranks"`     // ranks (goroutines in-process, or taken from MPI)
	Threads int   `toml:"threads" json:"threads"` // worker goroutines per rank, at most MaxThreads (4096); 0 = cores / ranks
	Dims    []int `toml:"dims" json:"dims"`       // process grid, C order; empty = automatic
	// Timeout is how long, in seconds, a rank waits at a halo exchange or a
	// collective before it ends the job naming the ranks it waited for
	// (under MPI); 0 = automatic: 100 × the slowest step seen, at least 60 s.
	Timeout float64 `toml:"timeout" json:"timeout"`
}

// Output is where results go and what a run leaves to look at.
type Output struct {
	Dir              string    `toml:"dir" json:"dir"`
	Fingerprint      bool      `toml:"fingerprint" json:"fingerprint"`             // field.sha256 in the report (one gather to rank 0)
	SnapshotEvery    int       `toml:"snapshot_every" json:"snapshot_every"`       // steps between snapshots; 0 = only the final one
	Formats          []string  `toml:"formats" json:"formats"`                     // snapshot formats: "png", "vti"; empty = none
	Slice            string    `toml:"slice" json:"slice"`                         // plane of a 3D field in PNGs: "z=mid", "y=10", "x=0.25"
	Cmap             string    `toml:"cmap" json:"cmap"`                           // PNG colour map: viridis, inferno, coolwarm
	Range            []float64 `toml:"range" json:"range"`                         // PNG colour range [min, max]; empty = each image's own
	ImageSize        int       `toml:"image_size" json:"image_size"`               // PNG: longest side of the field in pixels (larger grids are downsampled)
	Label            string    `toml:"label" json:"label"`                         // name of the field on the images' colour bar, e.g. "u" or "T (K)"
	ImageFormat      string    `toml:"image_format" json:"image_format"`           // format of the field images ("png" in formats): png, svg or pdf
	VTKFloat32       bool      `toml:"vtk_float32" json:"vtk_float32"`             // vti values as Float32 instead of the field's Float64
	VTKCompress      bool      `toml:"vtk_compress" json:"vtk_compress"`           // zlib-compress vti data
	DiagnosticsEvery int       `toml:"diagnostics_every" json:"diagnostics_every"` // steps between diagnostics.csv rows; 0 = none
	ProgressEvery    float64   `toml:"progress_every" json:"progress_every"`       // off a terminal: seconds between progress lines (also one at every 10%)
	ProbeEvery       int       `toml:"probe_every" json:"probe_every"`             // steps between probes.csv rows (also one at step 0 and at the last step)
	Probe            []Probe   `toml:"probe" json:"probe,omitempty"`               // [[output.probe]] points sampled into probes.csv
}

// Checkpoint is when and how the run saves restartable state.
type Checkpoint struct {
	Every           int    `toml:"every" json:"every"`                         // steps between checkpoints; 0 = none on a schedule
	Final           bool   `toml:"final" json:"final"`                         // also write one when the run ends
	Keep            int    `toml:"keep" json:"keep"`                           // newest complete checkpoints kept; 0 = all
	Dir             string `toml:"dir" json:"dir"`                             // default <output.dir>/checkpoints
	Chunk           []int  `toml:"chunk" json:"chunk"`                         // chunk shape, C order; empty = ~2 MiB chunks
	Shard           Shard  `toml:"shard" json:"shard"`                         // "auto" (a file per writer), "none" (a file per chunk) or a shard shape
	Level           int    `toml:"level" json:"level"`                         // zstd level 1..22
	ContinueOnError bool   `toml:"continue_on_error" json:"continue_on_error"` // a failed checkpoint warns instead of ending the run
	Async           bool   `toml:"async" json:"async"`                         // compress and write while the run steps on (a copy of the field: 8 bytes a cell)
}

// Maps are per-cell maps of the media, paths of .npy files (C order,
// float64 or float32, the grid's shape) or Zarr v3 array folders (a heat
// checkpoint's u; a checkpoint folder stands for its k or rho_c). A
// relative path is relative to the current directory, as output.dir is.
// "" = none: k = equation.alpha, ρc = 1.
type Maps struct {
	K    string `toml:"k" json:"k"`         // conductivity k, finite and >= 0 (0: an insulating hole)
	RhoC string `toml:"rho_c" json:"rho_c"` // volumetric heat capacity ρc (heat), finite and > 0
	// Missing is what a chunk that a Zarr input (maps.k, maps.rho_c,
	// initial.path, source.path) does not store means: "error" (or "", the
	// default) refuses it, naming the chunk — a chunk lost in a copy would
	// otherwise read as a block of fill values, with fill 0 an insulating
	// hole; "fill" reads it as the array's fill_value, as Zarr writers that
	// skip chunks of fill values intend.
	Missing string `toml:"missing" json:"missing"`
}

// Material is one [[material]] table: a region of the media, in physical
// coordinates (C order), and what it sets there; later tables over earlier
// ones, all over the maps. Region kinds: "box" (lo, hi: lo <= x < hi),
// "ball" (center, radius; a disc in 2D), "cylinder" (center, radius, axis:
// the C-order index of the axis it runs along; 3D only), "half-space"
// (point, normal: (x − point)·normal >= 0). A cell belongs by its centre.
// A key left out keeps what lies under, except fixed: a material without
// it makes its cells free again.
type Material struct {
	Name   string    `toml:"name,omitempty" json:"name,omitempty"` // optional, unique; in messages
	Region string    `toml:"region" json:"region"`
	Lo     []float64 `toml:"lo" json:"lo,omitempty"`
	Hi     []float64 `toml:"hi" json:"hi,omitempty"`
	Center []float64 `toml:"center" json:"center,omitempty"`
	Radius float64   `toml:"radius,omitzero" json:"radius,omitempty"`
	Axis   int       `toml:"axis,omitzero" json:"axis,omitempty"`
	Point  []float64 `toml:"point" json:"point,omitempty"`
	Normal []float64 `toml:"normal" json:"normal,omitempty"`
	K      *float64  `toml:"k" json:"k,omitempty"`         // conductivity, >= 0; 0 is an insulating hole
	RhoC   *float64  `toml:"rho_c" json:"rho_c,omitempty"` // volumetric heat capacity (heat), > 0
	Fixed  *float64  `toml:"fixed" json:"fixed,omitempty"` // hold the cells at this value
}
