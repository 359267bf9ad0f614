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
	// cells per axis; 2 or 3 axes; at most 2^40 (1,099,511,627,776) cells in all: more, or a
	// count that overflows, is refused naming it
	Shape []int `toml:"shape" json:"shape"`
	// physical extent per axis; cell size `h = length/shape`; cells are centred at `(i+½)·h`.
	// A cell whose square is 0 or overflows in double precision (below about 1e-154 or above
	// 1e154), or cells whose explicit stability limit 1/(2·Σ1/h²) is not a positive number,
	// are refused naming the cell size
	Length []float64 `toml:"length" json:"length" unit:"length"`
	// ghost layers per side (1–8) = the temporal-blocking depth k: with k > 1 a rank exchanges
	// ghosts once per k steps and advances its box k steps per exchange (same bits as k = 1);
	// every box must be at least k cells wide
	Ghost int `toml:"ghost" json:"ghost"`
}

// Geometry is the grid's shape and lengths, whose cell sizes and centres
// the run, its outputs and its checks take from one place.
func (g Grid) Geometry() field.Geometry { return field.Geometry{Shape: g.Shape, Length: g.Length} }

// Equation selects what is solved.
type Equation struct {
	// `"heat"`: ∂u/∂t = α∇²u + f (in media ρc·∂u/∂t = ∇·(k∇u) + f); `"poisson"`: ∇²u = f (in
	// media ∇·(k∇u) = f)
	Kind string `toml:"kind" json:"kind"`
	// poisson: `"multigrid"` (cycles of multigrid.cycle), `"mgcg"` (conjugate gradients preconditioned by one
	// multigrid cycle; for media with large jumps, see Heterogeneous media) or `"jacobi"`
	// (weighted Jacobi sweeps, ω = 0.8: plain Jacobi stalls on the most oscillatory mode next
	// to a cell-centred Dirichlet face); implicit heat: `"multigrid"` cycles, or `"mgcg"` for
	// each step, stopping on the backward error as the cycles do (see run.tolerance); in media every
	// `"multigrid"` solve begins with plain cycles and hands over to mgcg where they converge slowly (see
	// Heterogeneous media)
	Solver string `toml:"solver" json:"solver"`
	// heat: `"explicit"` (FTCS), `"backward-euler"`, `"crank-nicolson"` (each step a
	// multigrid solve; any dt is stable) or `"sdirk4"` (five solves a step, fourth order,
	// L-stable; with dt = "auto" its own error estimate costs no extra solve)
	Scheme string `toml:"scheme" json:"scheme"`
	// diffusivity α (heat); without maps and materials also the conductivity k of the faces
	Alpha float64 `toml:"alpha" json:"alpha" unit:"length²/time"`
	// time step (heat). Explicit: 0 (or `"auto"`) picks 0.9 × the stability limit
	// 1/(2α·Σ1/h²); a larger value is refused, naming the limit. Implicit: any positive value,
	// or `"auto"`: each step chosen from an estimate of its own error (step doubling) to meet
	// equation.rtol and atol, landing on run.t_end, run.events, the switches of the source's and
	// faces' expressions and tables, and output.probe_dt's times (see Time steps that choose
	// themselves)
	DT Step `toml:"dt" json:"dt" unit:"time"`
	// dt = "auto": the local error a step may make, relative to |u| (default 1e-4); a step is
	// kept where max over cells of |error|/(atol + rtol·|u|) ≤ 1
	RTol float64 `toml:"rtol" json:"rtol"`
	// dt = "auto": the local error a step may make in the field's units where u is near 0
	// (default: rtol, as for a field of order 1)
	ATol float64 `toml:"atol" json:"atol" unit:"field"`
	// dt = "auto": the smallest step; a step that cannot meet the tolerance at it fails the run
	// (exit 1, naming the time, dt and the estimate). Default run.t_end × 1e-12
	DTMin float64 `toml:"dt_min" json:"dt_min" unit:"time"`
	// dt = "auto": the largest step (default run.t_end)
	DTMax float64 `toml:"dt_max" json:"dt_max" unit:"time"`
	// dt = "auto": the first step; 0 (the default) chooses it from the field at the start
	// (Hairer's: h₀ = 0.01·‖u/sc‖∞/‖∂u/∂t/sc‖∞ with sc = atol + rtol·|u|, then how fast
	// ∂u/∂t turns over h₀ bounds it; run.t_end × 1e-6 for a field at rest)
	DTInitial float64 `toml:"dt_initial" json:"dt_initial" unit:"time"`
}

// Multigrid tunes the multigrid solver (Poisson, implicit heat steps).
type Multigrid struct {
	// `"chebyshev"` (Jacobi sweeps with Chebyshev weights), `"jacobi"` (weighted Jacobi, ω =
	// 4/5 in 2D, 6/7 in 3D), `"rbgs"` (red-black Gauss–Seidel)
	Smoother string `toml:"smoother" json:"smoother"`
	// `"auto"` (F; SDIRK4's stages in 2D: V with 4 and 3 sweeps, the last stage F; mgcg: V, or W
	// for 3D Poisson),
	// `"f"`, `"w"`, `"v"`, or `"fmg"` (one full-multigrid cycle, then V-cycles; in media, then
	// mgcg from it)
	Cycle string `toml:"cycle" json:"cycle"`
	// smoothing sweeps before each coarse correction; 0: 3 (2D) or 4 (3D) for chebyshev and
	// jacobi, 2 for rbgs (SDIRK4's stages in 2D under cycle "auto": 4; mgcg: 4)
	Pre int `toml:"pre" json:"pre"`
	// smoothing sweeps after each coarse correction; 0: 1 (2D) or 4 (3D) for chebyshev and
	// jacobi, 2 for rbgs (SDIRK4's stages in 2D under cycle "auto": 3; mgcg: 4)
	Post int `toml:"post" json:"post"`
	// levels, the fine grid included; 0: as many as the grid allows; more is refused naming
	// the limit
	Levels int `toml:"levels" json:"levels"`
	// prolongation: `"linear"` or `"constant"`; in media, plain cycles interpolate linearly by
	// the faces where the jumps lie on the coarse cells' faces and no cell is held, mgcg
	// always piecewise constant
	Interpolation string `toml:"interpolation" json:"interpolation"`
	// implicit heat: cycles one step may take before the run fails
	MaxCycles int `toml:"max_cycles" json:"max_cycles"`
	// coarse levels on many ranks: once a rank's box of the next level would have fewer than
	// this many cells along an axis (0: 32), the ranks hand their boxes on, stage by stage, to
	// rank 0 or to one rank of each group of neighbours (multigrid.gather_cells)
	AgglomerateBelow int `toml:"agglomerate_below" json:"agglomerate_below"`
	// a coarse level of at most this many cells (0: 16384) is handed to rank 0 whole, a larger
	// one to one rank of each group of neighbours (multigrid.agglomerate_below)
	GatherCells int `toml:"gather_cells" json:"gather_cells"`
}

// Run is how long to run and how often to check.
type Run struct {
	// heat: time steps; poisson: the iteration cap (multigrid: cycles). The total: a restart
	// continues to it
	Steps int `toml:"steps" json:"steps"`
	// heat: stop at this time (0: off); the steps follow from dt, ⌈t_end/dt⌉, and the last one
	// is shortened to land on it. Given together with `run.steps` (from any layers: the file,
	// `--set`, `--steps`, a restart's checkpoint; not the built-in problem's 2000), the run
	// stops at whichever comes first: at t_end when ⌈t_end/dt⌉ ≤ steps, else after `steps`
	// steps, short of t_end, with a warning saying so. The config keeps t_end as given, so a
	// restart with a larger `--steps` still stops at it. A t_end of more than 10¹² steps, or
	// of none, is refused naming dt
	TEnd float64 `toml:"t_end" json:"t_end" unit:"time"`
	// multigrid and mgcg (poisson and each implicit step): converged once the componentwise
	// backward error max_i |f − Au|_i/((|A||u|)_i + |f_i|) < tolerance — u solves exactly a
	// problem whose every coefficient and source differ from yours by less than that
	// fraction (an implicit step's right side, the previous state, is taken as a whole: |f_i|
	// becomes max(|f_i|, ‖f‖∞)); its floor is a few ulps on any medium and grid (default 1e-10; mgcg, asked
	// for or chosen for Poisson in media, 1e-12; below 1e-16 is refused; a solve that stops
	// improving above it at the rounding floor ends there as a success, reported). jacobi:
	// once max|Δu| of one sweep < tolerance at a check (default 1e-6)
	Tolerance float64 `toml:"tolerance" json:"tolerance"`
	// steps between checks: one global max-reduction of max|Δu| (Jacobi convergence, NaN
	// detection), stop requests and progress (multigrid checks every cycle)
	CheckEvery int `toml:"check_every" json:"check_every"`
	// heat with equation.dt = "auto": times at which the source or a face changes abruptly; no
	// step straddles one (the steps land on it), and the step after one is chosen afresh from
	// the field. Each in (0, t_end]. The switches of expressions that compare t with a number
	// (`t < 1 ? 0 : 50`) and the knots of time tables (steps land on them only) are found
	// without being listed
	Events []float64 `toml:"events" json:"events" unit:"time"`
}

// Boundary is the default condition for every face plus optional per-face
// overrides. Kinds: "dirichlet" (value: u on the face), "neumann" (value:
// the flux k∂u/∂n, n outward; 0 insulates), "robin" (h, and value: the
// ambient; −k∂u/∂n = h(u_face − value)), "periodic" (both faces of an
// axis). A value (and h) is a number, an expression of x, y, z, t or a
// time table (Value).
type Boundary struct {
	// condition on every face: `dirichlet` (u = value on the face), `neumann` (value = the
	// flux k∂u/∂n, n outward, > 0 heats; 0 insulates), `robin` (a convective face: −k∂u/∂n =
	// h·(u_face − value), value the ambient), `periodic` (both faces of an axis); formulas
	// under "Boundaries"
	Kind string `toml:"kind" json:"kind"`
	// the value of the faces without one of their own that are dirichlet or of
	// `boundary.kind`: a number, an expression of x, y, z, t (`"300 + 20*sin(2*pi*t/86400)"`)
	// or a time table (`{table = "wall.csv"}`); one that no face takes is refused
	Value Value `toml:"value" json:"value" unit:"u (neumann: k·u/length)"`
	// the heat-transfer coefficient of the robin faces without one of their own (number,
	// expression or table, ≥ 0: a constant expression below 0, such as `"-1"`, and a table
	// with a row below 0 are refused when the config loads, naming the file and the line);
	// required for a robin face, refused where no face is robin
	H   *Value `toml:"h,omitempty" json:"h,omitempty" unit:"k/length"`
	XLo *Face  `toml:"x_lo" json:"x_lo,omitempty"`
	XHi *Face  `toml:"x_hi" json:"x_hi,omitempty"`
	YLo *Face  `toml:"y_lo" json:"y_lo,omitempty"`
	YHi *Face  `toml:"y_hi" json:"y_hi,omitempty"`
	ZLo *Face  `toml:"z_lo" json:"z_lo,omitempty"`
	ZHi *Face  `toml:"z_hi" json:"z_hi,omitempty"`
}

// Face overrides the boundary condition of one face; unset fields inherit
// the [boundary] defaults.
type Face struct {
	// this face's own condition, as boundary.kind (unset: the boundary's); faces x_lo, x_hi,
	// y_lo, y_hi (and z_lo, z_hi in 3D); periodic on both faces of an axis or neither
	Kind string `toml:"kind,omitempty" json:"kind,omitempty"`
	// this face's own value, as boundary.value (unset: the boundary's). A periodic face wraps,
	// so a value of its own is refused rather than ignored
	Value *Value `toml:"value" json:"value,omitempty" unit:"u (neumann: k·u/length)"`
	// this face's own heat-transfer coefficient, as boundary.h (robin; refused on a face that
	// is not robin)
	H *Value `toml:"h,omitempty" json:"h,omitempty" unit:"k/length"`
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
//	file      the field in path: a .npy, a Zarr v3 array or a heat
//	          checkpoint (its u; a checkpoints folder, its latest or a run's
//	          output folder name the newest); relative to the current
//	          directory, as map paths are
type Profile struct {
	// initial: the field at step 0 (poisson: the first guess): `constant`, `hotspot`,
	// `gaussian`, `sine`, `random`, `expr` (a formula, `expr`), `file` (a field read from
	// `path`). source: the source f, the same kinds plus `none` (`file`: a measured or
	// computed field of f from `source.path`, read as `initial.path` is, each rank its box;
	// read again on a restart). An `expr` source may read t (heat only): `"t < 0.1 ? 0 : 1e3"`
	// is a heater that switches on at t = 0.1; one that reads no t is evaluated once. A value
	// that is not finite exits 1 naming the key, the point, the time and the step
	Kind string `toml:"kind" json:"kind"`
	// constant value; hotspot value; gaussian/sine/random amplitude; a source's keys default
	// to 0, so a hotspot or gaussian source needs its radius
	Value float64 `toml:"value" json:"value" unit:"u (source: u/time, in media ρc·u/time)"`
	// added to gaussian/sine/random; the value outside a hotspot
	Background float64 `toml:"background" json:"background" unit:"as value"`
	// hotspot/gaussian centre, physical coordinates; a centre outside the domain is a warning,
	// and so is a hotspot that covers no cell centre (the field is all background); default:
	// the domain centre
	Center []float64 `toml:"center" json:"center,omitempty" unit:"length"`
	// hotspot radius; gaussian σ
	Radius float64 `toml:"radius" json:"radius" unit:"length"`
	// sine wave numbers: `value·Π sin(mode·π·x/length)`; default: 1 per axis
	Mode []int `toml:"mode" json:"mode,omitempty"`
	// random seed; the value depends only on the seed and the global cell index
	Seed int64 `toml:"seed" json:"seed"`
	// `kind = "expr"`: a formula of x, y, z (the cell centre; see "Expressions, tables and
	// fields from files"), checked when the config loads (a mistake exits 2 naming its
	// column); it may read t, which is 0 here. A value that is not finite exits 1 naming the
	// key, the point and step 0. A source's expr may read t (heat only)
	Expr string `toml:"expr,omitempty" json:"expr,omitempty"`
	// `kind = "file"`: the field at step 0 from a `.npy` (float64/float32, C order, shaped
	// exactly as `grid.shape`), a Zarr v3 array folder, or another run's checkpoint (its `u`):
	// a `step-NNNNNNNN` folder, a checkpoints folder or its `latest` (the newest complete
	// one), or a run's output folder. Relative to the directory heat runs in, as map paths
	// are. Each rank reads only its box; a wrong shape or a value that is not finite exits 2
	// naming the file, the cell (C order) and the value. A restart takes u from its checkpoint
	// and does not read the file
	Path string `toml:"path,omitempty" json:"path,omitempty"`
	// heat only: the source multiplied in time by a number, an expression of t alone (`"1 +
	// 0.5*sin(2*pi*t/86400)"`) or a time table `{table = "power.csv"}` (`t,value`, linear
	// between rows, held outside); its time factor is one evaluation a step (the steps weigh
	// the source field by it), whatever the source's kind. On `initial`, which has no time, it
	// is refused, as is one that reads x, y or z (a factor of space belongs in `source.expr`)
	Amplitude *Value `toml:"amplitude,omitempty" json:"amplitude,omitempty"`
}

// Parallel is how the work is split.
type Parallel struct {
	// ranks (goroutines in this process)
	Ranks int `toml:"ranks" json:"ranks"`
	// worker goroutines per rank, at most 4096 (more is refused, exit 2; a rank's team can
	// index 16383); 0 = the process's cores divided among the ranks
	Threads int `toml:"threads" json:"threads"`
	// process grid; empty = chosen to minimise the halo surface for the grid's aspect
	Dims []int `toml:"dims" json:"dims"`
	// under MPI, seconds a rank waits at a halo exchange or a collective before it ends the
	// job naming the ranks it waited for and the step; 0 = automatic: 100 × the slowest step
	// seen, at least 60 s in the steps and 5 min outside them (start-up, checkpoints, the
	// report); see "Running across nodes with MPI"
	Timeout float64 `toml:"timeout" json:"timeout" unit:"s (wall clock)"`
}

// Output is where results go and what a run leaves to look at.
type Output struct {
	// where `report.json` goes
	Dir string `toml:"dir" json:"dir"`
	// compute `field.sha256` (one gather of the field to rank 0 at the end)
	Fingerprint bool `toml:"fingerprint" json:"fingerprint"`
	// steps between snapshots; 0: only the final one (a run always ends with one when
	// `formats` is not empty)
	SnapshotEvery int `toml:"snapshot_every" json:"snapshot_every"`
	// simulated time between snapshots (equation.dt = "auto" only; 0: by snapshot_every): at
	// t = k × snapshot_dt exactly, the steps landing on them. At most 10⁶ to run.t_end
	SnapshotDT float64 `toml:"snapshot_dt" json:"snapshot_dt" unit:"time"`
	// snapshot formats: `"png"` (a field image with axes and colour bar, in
	// `output.image_format`, and its plane as `.npy`), `"vti"` (VTK ImageData; `.pvti` + one
	// piece per rank under several ranks)
	Formats []string `toml:"formats" json:"formats"`
	// the plane of a 3D field an image shows: `z=mid`, `y=10`, `x=0.25` (a fraction)
	Slice string `toml:"slice" json:"slice"`
	// images' colour map: `viridis`, `inferno`, `coolwarm`
	Cmap string `toml:"cmap" json:"cmap"`
	// fixed colour range of the images `[min, max]` (compare the frames of a run); empty: each
	// image's own
	Range []float64 `toml:"range" json:"range"`
	// least long side of an image's field in pixels: a grid with fewer cells is drawn with each
	// cell a block of whole pixels, enlarged by a whole factor to at least this; one with up to
	// twice as many cell for cell; a larger one box-averaged by the largest whole factor that
	// keeps at least this (under twice it)
	ImageSize int `toml:"image_size" json:"image_size"`
	// the field's name on the colour bar, e.g. `"T (K)"`; `""` for none
	Label string `toml:"label" json:"label"`
	// format of the field images: `"png"`, `"svg"` or `"pdf"` (vector axes and text, for
	// papers)
	ImageFormat string `toml:"image_format" json:"image_format"`
	// store `.vti` values as Float32 instead of the field's Float64
	VTKFloat32 bool `toml:"vtk_float32" json:"vtk_float32"`
	// zlib-compress `.vti` data
	VTKCompress bool `toml:"vtk_compress" json:"vtk_compress"`
	// steps between rows of `diagnostics.csv`; 0: none
	DiagnosticsEvery int `toml:"diagnostics_every" json:"diagnostics_every"`
	// off a terminal, seconds between progress records (there is also one at every tenth of
	// the run)
	ProgressEvery float64 `toml:"progress_every" json:"progress_every" unit:"s (wall clock)"`
	// steps (poisson: iterations) between rows of `probes.csv`; there is always a row at step
	// 0 and one at the last step. With `grid.ghost = k` > 1 a multiple of k keeps the temporal
	// blocks whole
	ProbeEvery int `toml:"probe_every" json:"probe_every"`
	// simulated time between rows of `probes.csv` (0: by output.probe_every instead): rows at
	// t = k × probe_dt exactly, the steps landing on them — steps that choose themselves only
	// (equation.dt = "auto"); a row at t = 0 and at the end too. At most 10⁶ rows to run.t_end
	ProbeDT float64 `toml:"probe_dt" json:"probe_dt" unit:"time"`
	Probe   []Probe `toml:"probe" json:"probe,omitempty"` // [[output.probe]] points sampled into probes.csv
	// the units the pictures write on their axes, as `units = {length = "m", time = "s",
	// field = "K"}`; "" writes none. They name what the config's numbers already are: heat
	// converts nothing
	Units Units `toml:"units" json:"units"`
	// the unit the probes' plot draws time in: "s", "min", "h" or "d", converted from
	// output.units.time (which must then be one of them too); "": output.units.time's
	ProbeTime string `toml:"probe_time" json:"probe_time"`
	// draw the probes' plot on a logarithmic value axis (a decay over decades; values <= 0
	// left out)
	ProbeLog bool `toml:"probe_log" json:"probe_log"`
}

// Checkpoint is when and how the run saves restartable state.
type Checkpoint struct {
	// steps between checkpoints (0: none on a schedule)
	Every int `toml:"every" json:"every"`
	// simulated time between checkpoints (equation.dt = "auto" only; 0: by every): at t = k ×
	// every_time exactly, the steps landing on them; a restart may not change it (its times are
	// the steps' events). At most 10⁶ to run.t_end
	EveryTime float64 `toml:"every_time" json:"every_time" unit:"time"`
	// also write one when the run ends
	Final bool `toml:"final" json:"final"`
	// newest complete checkpoints kept; older ones are deleted (0 keeps all)
	Keep int `toml:"keep" json:"keep"`
	// where checkpoints go
	Dir string `toml:"dir" json:"dir"`
	// chunk shape (C order); empty picks chunks of about 2 MiB. Each chunk file is fsynced, so
	// on a disk where fsync is dear larger chunks write faster (4096² here: 2 MiB chunks
	// 0.39–0.45 s, `[1024,1024]` 0.29–0.30 s) but give fewer writers and coarser restarts
	Chunk []int `toml:"chunk" json:"chunk"`
	// how chunks go into files. `"auto"`: each file holds one shard of chunks (Zarr's
	// `sharding_indexed` codec, the index at the end with a CRC32-C) shaped like a writer's
	// box, rounded up to whole inner chunks: one file per rank (under MPI one per node,
	// written by one rank there, as ADIOS2 aggregates); no shard holds more than 2^27 values
	// (1 GiB). A shape (C order) fixes the shards (`checkpoint.chunk`, if given, must divide
	// it). `"none"`: a file per chunk (the layout of format 1–2 checkpoints). A restart reads
	// of a shard only its index and the inner chunks its box takes (range reads; those are
	// checked by the index's CRC32-C and their zstd frame checksums, the whole file's CRC32-C
	// by `inspect --verify`)
	Shard Shard `toml:"shard" json:"shard"`
	// zstd level, 1 (fast: literals left unencoded, about twice as fast as entropy coding them
	// for 0.3% more bytes on a field of doubles) to 22 (small)
	Level int `toml:"level" json:"level"`
	// a failed checkpoint warns instead of ending the run (exit 1)
	ContinueOnError bool `toml:"continue_on_error" json:"continue_on_error"`
	// write in the background: the field's chunks are compressed by their writers before the
	// run steps on (their compressed bytes kept, at most about 8 bytes a cell in all, counted
	// in the memory estimate), the run steps on while they are written, and the checkpoint
	// commits at the next one or at the end (a stop's and the last are complete before the run
	// ends, written while the end's outputs are made); the checkpoints a commit prunes are
	// removed in the background too, once the next checkpoint's chunks are written (renamed
	// `.old` first, so never mistaken for a checkpoint)
	Async bool `toml:"async" json:"async"`
}

// Maps are per-cell maps of the media, paths of .npy files (C order,
// float64 or float32, the grid's shape) or Zarr v3 array folders (a heat
// checkpoint's u; a checkpoint folder stands for its k or rho_c). A
// relative path is relative to the current directory, as output.dir is.
// "" = none: k = equation.alpha, ρc = 1.
type Maps struct {
	// per-cell map of the conductivity k: a `.npy` file (C order, `<f8`/`>f8`/`<f4`/`>f4`,
	// shaped exactly as `grid.shape`) or a Zarr v3 array folder (float64/float32; codecs
	// `bytes`, then `zstd`, `gzip`, `crc32c`, or `sharding_indexed`), or a heat checkpoint (a
	// checkpoint folder stands for its `k` or `rho_c`, a checkpoints folder or its `latest`
	// for the newest; read with a restart's checks); `""`: k = `equation.alpha`, ρc = 1. A
	// relative path is relative to the directory heat runs in, as `output.dir` is, not to the
	// config file's. Every value is checked before the run (k finite and ≥ 0, 0 an insulating
	// hole; ρc finite and > 0): a wrong shape, data type or value exits 2 naming the file and
	// the cell; each rank reads only its box's rows or chunks. Links: see "Expressions, tables
	// and fields from files"
	K string `toml:"k" json:"k"`
	// per-cell map of the volumetric heat capacity ρc (heat), read and checked as maps.k is;
	// "": ρc = 1
	RhoC string `toml:"rho_c" json:"rho_c"`
	// a chunk a Zarr input (`maps.*`, `initial.path`, `source.path`) does not store: `""` or
	// `"error"` refuses it (exit 2, naming the key, the file and the chunk; a chunk lost in a
	// copy would read as its fill value, fill 0 an insulating hole); `"fill"` reads it as the
	// array's `fill_value`, as writers that skip chunks of fill values mean it
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
	// optional, unique, in messages. `[[material]]` tables are regions over the maps, in
	// order, a later one over an earlier one. Messages name a table by its index from 0,
	// `material[1].radius`
	Name string `toml:"name,omitempty" json:"name,omitempty"`
	// `"box"`, `"ball"`, `"cylinder"` (3D) or `"half-space"`. A cell belongs by its centre; a
	// region that holds no cell centre (a layer between two rows of centres, a region off the
	// grid) is refused (exit 2) naming `material[i].region`, the material and the cell size
	Region string `toml:"region" json:"region"`
	// box: the low corner, physical coordinates in C order (lo ≤ x < hi)
	Lo []float64 `toml:"lo" json:"lo,omitempty" unit:"length"`
	// box: the high corner, above lo on every axis
	Hi []float64 `toml:"hi" json:"hi,omitempty" unit:"length"`
	// ball: its centre (a disc in 2D); cylinder: a point on its axis; physical coordinates in
	// C order
	Center []float64 `toml:"center" json:"center,omitempty" unit:"length"`
	// ball, cylinder: the radius, > 0
	Radius float64 `toml:"radius,omitzero" json:"radius,omitempty" unit:"length"`
	// cylinder: the C-order index of the axis it runs along (0 = z), through the whole domain
	Axis int `toml:"axis,omitzero" json:"axis,omitempty"`
	// half-space: a point on its plane; the region is (x − point)·normal ≥ 0. A key the region
	// does not take is refused
	Point []float64 `toml:"point" json:"point,omitempty" unit:"length"`
	// half-space: the normal pointing into it, not zero
	Normal []float64 `toml:"normal" json:"normal,omitempty"`
	// the conductivity the region sets, ≥ 0 (0 is an insulating hole); left out, the cells
	// keep what lies under
	K *float64 `toml:"k" json:"k,omitempty" unit:"k"`
	// the volumetric heat capacity the region sets (heat), > 0; left out, the cells keep what
	// lies under
	RhoC *float64 `toml:"rho_c" json:"rho_c,omitempty" unit:"ρc"`
	// hold the cells at this value (Dirichlet inside the domain); a material without it makes
	// its cells free again
	Fixed *float64 `toml:"fixed" json:"fixed,omitempty" unit:"u"`
}

// Units are the names of the units of a run's numbers, for the axes of its
// pictures: images, plots, line-outs.
type Units struct {
	// the unit of lengths and coordinates, e.g. "m" or "mm"
	Length string `toml:"length" json:"length"`
	// the unit of time, e.g. "s"
	Time string `toml:"time" json:"time"`
	// the unit of the field, e.g. "K" or "V"
	Field string `toml:"field" json:"field"`
}

// WithUnit is name with unit in brackets, "x (m)", or name alone where the
// unit is "".
func WithUnit(name, unit string) string {
	if unit == "" {
		return name
	}
	return name + " (" + unit + ")"
}
