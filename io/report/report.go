// Package report defines the run report: the JSON document every run writes
// to <out>/report.json (and to --report FILE). Scripts and tests rely on its
// field names; DESIGN.md lists the contract.
package report

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"sort"
	"strings"
	"time"

	"heat/internal/atomicfile"
)

// Report is one run's outcome. Every run writes one, however it ended:
// Status says how, StopReason why in words, ExitCode is the process's.
type Report struct {
	Status     string    `json:"status"` // completed, converged, diverged, interrupted, failed
	StopReason string    `json:"stop_reason"`
	ExitCode   int       `json:"exit_code"`
	StartedAt  time.Time `json:"started_at"`
	// RunID names the run; a restart keeps the id of the run it continues,
	// and every checkpoint records it.
	RunID   string   `json:"run_id"`
	Command []string `json:"command"`
	// MemoryEstimate is the bytes the run was estimated to need on each
	// host, checked against the memory there before the run.
	MemoryEstimate int64 `json:"memory_estimate_bytes"`
	// PeakRSS is rank 0's process's peak resident memory (VmHWM), for
	// comparison.
	PeakRSS int64 `json:"peak_rss_bytes"`
	// GoSys is the memory rank 0's Go runtime obtained from the OS (its
	// heap, stacks and metadata), at the end of the run, less the address
	// space that aligns large arrays on huge pages and is never touched.
	GoSys int64 `json:"go_sys_bytes"`

	Version    string  `json:"version"`
	GoVersion  string  `json:"go_version"`
	Transport  string  `json:"transport"` // "local" or "mpi"
	MPILibrary string  `json:"mpi_library,omitempty"`
	Config     any     `json:"config"` // the resolved config
	Ranks      int     `json:"ranks"`
	Threads    int     `json:"threads"` // worker goroutines per rank
	Dims       []int   `json:"dims"`    // process grid, C order
	Steps      int     `json:"steps"`   // steps (heat) or iterations (poisson) done
	SimTime    Float   `json:"sim_time"`
	Converged  *bool   `json:"converged"` // poisson only; null for heat
	Residual   Float   `json:"residual"`  // max |Δu| at the last check
	WallS      float64 `json:"wall_s"`    // time stepping, setup and final gather excluded
	MUpdatesPS Float   `json:"mupdates_per_s"`
	Field      Field   `json:"field"`
	Solver     *Solver `json:"solver,omitempty"` // how the run was solved
	// CPUS is rank 0's process's CPU time (user and system, all its
	// threads) over the interval of WallS. Others is the share of the
	// CPUs that process may run on (its affinity mask) that other
	// processes, or the hypervisor (steal), used over that interval:
	// their busy time from /proc/stat less the process's own CPU time,
	// over WallS × those CPUs, in [0, 1], to the kernel's 10 ms ticks.
	// Under MPI the other ranks' processes on those CPUs are among the
	// others. Absent where not measured (CPUS off Unix, Others off Linux).
	CPUS   *float64 `json:"cpu_s,omitempty"`
	Others *float64 `json:"others,omitempty"`
	// Waits is what the waits of rank 0's process did over WallS: how
	// many ended while spinning, while yielding, or parked; spins that
	// lost their core (then every wait stops spinning for a while) or ran
	// out of budget; parts of a sweep a worker took from another.
	Waits *Waits `json:"waits,omitempty"`
	// EnergyBalance is the heat equation's account (heat runs that step
	// one step at a time; a restart's from its restart).
	EnergyBalance *EnergyBalance `json:"energy_balance,omitempty"`
	// Flux is a Poisson run's flows at its solution.
	Flux        *Flux        `json:"flux,omitempty"`
	PerRank     []Rank       `json:"per_rank"`
	Checkpoints []Checkpoint `json:"checkpoints"`
	Restart     *Restart     `json:"restart,omitempty"` // the checkpoint the run continued from
	// Straggler is the rank the run waited for (two ranks or more).
	Straggler *Straggler `json:"straggler,omitempty"`
	// Build and Hosts record what ran where, so that figures can be
	// reproduced and compared.
	Build Build  `json:"build"`
	Hosts []Host `json:"hosts"`
}

// Waits counts the waits of one process (see package internal/wait).
type Waits struct {
	Spun    uint64 `json:"spun"`
	Yielded uint64 `json:"yielded"`
	Parked  uint64 `json:"parked"`
	Lost    uint64 `json:"lost"`
	Expired uint64 `json:"expired"`
	Taken   uint64 `json:"taken"`
}

// EnergyBalance is the change of the heat content Σ ρc·u·V against the
// time integral of the heat put in: through each face (k∂u/∂n over it), from
// held cells, by the source. RelativeResidual is |ΔE − inflow| over the
// larger of |ΔE| and |inflow| (over the content where both are below 1e-12
// of it: a conserved run reads as the rounding it is).
type EnergyBalance struct {
	ContentStart     Float            `json:"content_start"`
	ContentEnd       Float            `json:"content_end"`
	ContentChange    Float            `json:"content_change"`
	Inflow           Float            `json:"inflow"`
	Faces            map[string]Float `json:"faces"` // per face (x_lo, …): ∫ heat in through it
	Held             Float            `json:"held"`
	Source           Float            `json:"source"`
	RelativeResidual Float            `json:"relative_residual"`
}

// Adaptive is how steps that choose themselves went: the steps kept and
// those taken again shorter (each attempt is three solves: the step whole
// and as two halves), the smallest and largest step kept, and the
// tolerances they met.
type Adaptive struct {
	Steps    int   `json:"steps"`
	Rejected int   `json:"rejected"`
	DTMin    Float `json:"dt_min"`
	DTMax    Float `json:"dt_max"`
	RTol     Float `json:"rtol"`
	ATol     Float `json:"atol"`
	// ControlS is rank 0's time in the controller's own work (keeping and
	// restoring a step's start, the estimate, the extrapolation), beside
	// the solves; ControlShare its share of wall_s.
	ControlS     float64 `json:"control_s"`
	ControlShare float64 `json:"control_share"`
}

// Flux is what flows at a Poisson run's solution (∇·(k∇u) = f read as a
// steady state, in the heat equation's signs: in is positive): through each
// face (k∂u/∂n over it), out of the held cells into the free ones, and what
// the source puts in (−∫f dV). Net is their sum, 0 at the exact solution;
// RelativeResidual is |Net| over the largest of the terms' magnitudes.
// The held cells' flux is an electrode's charge (k the permittivity), or
// the heat a held heater gives.
type Flux struct {
	Faces            map[string]Float `json:"faces"` // per face (x_lo, …): flow in through it
	Held             Float            `json:"held"`
	Source           Float            `json:"source"`
	Net              Float            `json:"net"`
	RelativeResidual Float            `json:"relative_residual"`
}

// Build is how the binary was built.
type Build struct {
	Revision     string `json:"revision"` // VCS revision, "+dirty" if modified; "" if unknown
	GOOS         string `json:"goos"`
	GOARCH       string `json:"goarch"`
	GOAMD64      string `json:"goamd64,omitempty"`
	GOEXPERIMENT string `json:"goexperiment,omitempty"`
	CGO          bool   `json:"cgo"`
	Kernel       string `json:"kernel"` // the kernel set the solver runs: generic, avx2, avx512
}

// Host is one machine the ranks ran on.
type Host struct {
	Name     string `json:"name"`
	CPUModel string `json:"cpu_model"`
	CPUFlags string `json:"cpu_flags"` // the vector and FMA flags that matter to the kernels
	CPUs     int    `json:"cpus"`      // online CPUs of the host
	Ranks    []int  `json:"ranks"`
}

// Restart is the checkpoint a run started from and how long reading it took.
type Restart struct {
	Path  string  `json:"path"`
	Step  int     `json:"step"`
	ReadS float64 `json:"read_s"`
	// ChangedInputs are the files read as the run steps that differ from
	// what the checkpoint recorded (--allow-input-changes): the run does
	// not reproduce the straight run.
	ChangedInputs []string `json:"changed_inputs,omitempty"`
}

// Field summarises the final global field (interior cells). Min and Max
// are over the finite values (a NaN shows in Mean and L2).
type Field struct {
	// SHA256 is over the global values in C order, each as 8 little-endian
	// IEEE-754 bytes; empty when output.fingerprint is false.
	SHA256 string `json:"sha256"`
	Min    Float  `json:"min"`
	Max    Float  `json:"max"`
	Mean   Float  `json:"mean"`
	L2     Float  `json:"l2"` // sqrt(Σ u²) over all cells
}

// Algebraic is the algebraic preconditioner's hierarchy: the grid level
// it solves (0: the fine grid; below, the levels from it down), where the
// run switched to it (the cycles of a Poisson solve before, or the implicit
// step, from 1, whose solve did; absent: chosen at the start), each level's
// rows (the first: the free cells), its operator complexity (nonzeros of
// all levels over the first's), how many times it was set up and scaled
// to a step length, and the seconds both took on rank 0.
type Algebraic struct {
	Level      int     `json:"level"`
	From       int     `json:"from,omitempty"`
	Rows       []int   `json:"rows"`
	Complexity float64 `json:"operator_complexity"`
	Setups     int     `json:"setups"`
	Rescales   int     `json:"rescales"`
	SetupS     float64 `json:"setup_s"`
}

// Solver is how the run was solved: explicit steps, Jacobi sweeps, or
// multigrid (Poisson, implicit heat steps).
type Solver struct {
	Kind     string `json:"kind"`             // "explicit", "jacobi", "multigrid" or "mgcg"
	Scheme   string `json:"scheme,omitempty"` // heat: "explicit", "backward-euler", "crank-nicolson", "sdirk4"
	Smoother string `json:"smoother,omitempty"`
	Cycle    string `json:"cycle,omitempty"`  // "v", "w", "fmg" (one FMG cycle, then V-cycles)
	Cycles   int    `json:"cycles,omitempty"` // multigrid cycles done (all steps together for heat)
	// KrylovSolves: in media every solve begins with plain cycles and
	// hands over to mgcg where they reduce the backward error too slowly;
	// how many solves did (the Poisson solve: then its kind is "mgcg";
	// implicit steps and stages). KrylovFrom: a Poisson solve that did,
	// the plain cycles before (counted in cycles).
	KrylovSolves int `json:"krylov_solves,omitempty"`
	KrylovFrom   int `json:"krylov_from,omitempty"`
	// ConvergenceFactor is the geometric mean of the residual reduction
	// per cycle (Poisson; null when undefined); CyclesPerStep the mean
	// cycles of an implicit step.
	ConvergenceFactor *Float  `json:"convergence_factor,omitempty"`
	CyclesPerStep     float64 `json:"cycles_per_step,omitempty"`
	// ResidualHistory is the relative residual ‖f−Au‖∞/‖f‖∞ after each
	// cycle (Poisson) or after each implicit step's last cycle (heat).
	ResidualHistory []Float `json:"residual_history,omitempty"`
	// StepHistory is the relative residual after each cycle of the last
	// implicit step (heat): where a step failed, the failing step's;
	// StepComponentHistory its componentwise backward error.
	StepHistory          []Float `json:"step_history,omitempty"`
	StepComponentHistory []Float `json:"step_component_history,omitempty"`
	// FloorSolves counts the solves (implicit steps, or the Poisson solve)
	// that stopped at the rounding floor above run.tolerance — solved as
	// far as double precision allows —, FloorBackwardError the largest
	// normwise backward error ‖f − Au‖∞/(‖A‖∞‖u‖∞ + ‖f‖∞) one stopped at.
	FloorSolves        int    `json:"floor_solves,omitempty"`
	FloorBackwardError *Float `json:"floor_backward_error,omitempty"`
	// Adaptive is the account of steps that chose themselves
	// (equation.dt = "auto"); absent with fixed steps.
	Adaptive *Adaptive `json:"adaptive,omitempty"`
	// Stalled says the Poisson solve stopped reducing its backward errors
	// above run.tolerance: the rounding floor of the grid was reached.
	Stalled bool `json:"stalled,omitempty"`
	// BackwardError is the normwise backward error ‖f − Au‖∞/(‖A‖∞‖u‖∞
	// + ‖f‖∞) at the end (of the Poisson solve, or the last implicit
	// step's); BackwardHistory as ResidualHistory.
	BackwardError   *Float  `json:"backward_error,omitempty"`
	BackwardHistory []Float `json:"backward_history,omitempty"`
	// ComponentError is the componentwise backward error max_i
	// |f − Au|_i/((|A||u|)_i + |f_i|) at the end, what run.tolerance bounds
	// for every multigrid and mgcg solve; ComponentHistory as
	// ResidualHistory.
	ComponentError   *Float  `json:"component_error,omitempty"`
	ComponentHistory []Float `json:"component_history,omitempty"`
	Levels           []Level `json:"levels,omitempty"`
	// Algebraic, where mgcg is preconditioned by algebraic multigrid (a
	// medium the coarse grids cannot stand for), describes its hierarchy.
	Algebraic *Algebraic `json:"algebraic,omitempty"`
	// DiscretisationError is max |u − u_exact| over the cells, where the
	// problem's exact solution is known (sine modes on zero Dirichlet faces).
	DiscretisationError *Float `json:"discretisation_error,omitempty"`
}

// Level is one level of the multigrid hierarchy.
type Level struct {
	Shape []int   `json:"shape"`
	Ranks int     `json:"ranks"`  // ranks holding it: all, or 1 once gathered
	TimeS float64 `json:"time_s"` // rank 0's time in the level's own work
}

// Float is a float64 whose JSON stays valid when it is not finite: a
// number, or the string "NaN", "+Inf" or "-Inf" (JSON has no such numbers;
// Python's float() and Go's strconv.ParseFloat read these strings).
type Float float64

// MarshalJSON writes f as a number, or NaN and ±Inf as strings.
func (f Float) MarshalJSON() ([]byte, error) {
	x := float64(f)
	switch {
	case math.IsNaN(x):
		return []byte(`"NaN"`), nil
	case math.IsInf(x, 1):
		return []byte(`"+Inf"`), nil
	case math.IsInf(x, -1):
		return []byte(`"-Inf"`), nil
	}
	return json.Marshal(x)
}

// UnmarshalJSON reads a number, one of the strings MarshalJSON writes, or
// null (NaN).
func (f *Float) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case "null", `"NaN"`:
		*f = Float(math.NaN())
		return nil
	case `"+Inf"`:
		*f = Float(math.Inf(1))
		return nil
	case `"-Inf"`:
		*f = Float(math.Inf(-1))
		return nil
	}
	var x float64
	if err := json.Unmarshal(b, &x); err != nil {
		return fmt.Errorf("report: %s is not a number, \"NaN\", \"+Inf\" or \"-Inf\"", b)
	}
	*f = Float(x)
	return nil
}

// Rank is one rank's share of the work and its timings.
type Rank struct {
	Rank         int     `json:"rank"`
	Host         string  `json:"host"`
	Coords       []int   `json:"coords"` // in the process grid
	Offset       []int   `json:"offset"` // global index of the box's first cell
	Shape        []int   `json:"shape"`  // cells of the box
	Threads      int     `json:"threads"`
	CPUs         string  `json:"cpus"` // the rank's CPU affinity list, as in /proc/self/status ("0-3,8")
	ComputeS     float64 `json:"compute_s"`
	HaloWaitS    float64 `json:"halo_wait_s"`
	ReduceS      float64 `json:"reduce_s"`     // in the residual checks' Allreduce
	CheckpointS  float64 `json:"checkpoint_s"` // writing checkpoints (collective)
	OutputS      float64 `json:"output_s"`     // snapshots and diagnostics
	MessagesSent int64   `json:"messages_sent"`
	BytesSent    int64   `json:"bytes_sent"`
	Collectives  int64   `json:"collectives"` // residual checks (Allreduce), the solver's only collectives
}

// Checkpoint is one checkpoint written by the run: WriteS from its start
// to its commit, BlockingS the part the run waited for (with
// checkpoint.async the compressing and writing go on while it steps).
type Checkpoint struct {
	Step      int     `json:"step"`
	Path      string  `json:"path"`
	Bytes     int64   `json:"bytes"`
	WriteS    float64 `json:"write_s"`
	BlockingS float64 `json:"blocking_s"`
}

// Stats accumulates the summary of a field given in runs of values, in any
// split: the finite min and max, and the sums of u and u².
type Stats struct {
	Min, Max, Sum, SumSq float64
	N                    int
}

// NewStats is an empty summary.
func NewStats() Stats { return Stats{Min: math.Inf(1), Max: math.Inf(-1)} }

// Add takes in the values xs. The comparisons are plain (a NaN is never a
// min or max, but shows in the sums): Go's NaN-aware min and max cost
// ~6 ns a value, and this pass runs every few steps for diagnostics.
func (s *Stats) Add(xs []float64) {
	lo, hi, sum, sq := s.Min, s.Max, s.Sum, s.SumSq
	for _, x := range xs {
		if x < lo {
			lo = x
		}
		if x > hi {
			hi = x
		}
		sum += x
		sq += float64(x * x)
	}
	s.Min, s.Max, s.Sum, s.SumSq = lo, hi, sum, sq
	s.N += len(xs)
}

// Field is the summary as the report shows it (without the fingerprint).
func (s Stats) Field() Field {
	f := Field{Min: Float(s.Min), Max: Float(s.Max), L2: Float(math.Sqrt(s.SumSq))}
	if s.N > 0 {
		f.Mean = Float(s.Sum / float64(s.N))
	}
	return f
}

// Summarise computes the field summary of a global field in C order, with
// its fingerprint when asked.
func Summarise(u []float64, fingerprint bool) Field { return SummariseOver(u, nil, fingerprint) }

// SummariseOver is Summarise with the statistics over the cells where k is
// not 0 (k nil: every cell): the insulating holes of media keep their
// first value, which is no value of the medium's. The fingerprint is of
// every cell.
func SummariseOver(u, k []float64, fingerprint bool) Field {
	st := NewStats()
	if k == nil {
		st.Add(u)
	} else {
		for i := 0; i < len(u); {
			for i < len(u) && k[i] == 0 {
				i++
			}
			e := i
			for e < len(u) && k[e] != 0 {
				e++
			}
			st.Add(u[i:e])
			i = e
		}
	}
	f := st.Field()
	if fingerprint {
		h := sha256.New()
		buf := make([]byte, 0, 8*4096)
		for _, x := range u {
			buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(x))
			if len(buf) == cap(buf) {
				h.Write(buf)
				buf = buf[:0]
			}
		}
		h.Write(buf)
		f.SHA256 = hex.EncodeToString(h.Sum(nil))
	}
	return f
}

// Write stores r as indented JSON in path (whose folder must exist: heat
// never makes anew a folder deleted under a run); a script polling the file
// never reads half a report.
func Write(path string, r *Report) error {
	data, err := Marshal(r)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := atomicfile.Write(path, func(w io.Writer) error {
		_, err := w.Write(append(data, '\n'))
		return err
	}); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// Marshal is r as indented JSON that always parses: where a float64 the
// types do not guard with Float (the config's, sim_time) is not finite, the
// report is written again with every such number as Float writes it.
func Marshal(r *Report) ([]byte, error) {
	data, err := json.MarshalIndent(r, "", "  ")
	var ue *json.UnsupportedValueError
	if !errors.As(err, &ue) {
		return data, err
	}
	var b bytes.Buffer
	if err := guarded(&b, reflect.ValueOf(r)); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b.Bytes(), "", "  "); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// guarded writes v as encoding/json would, in the same order, but every
// float64 as a Float.
func guarded(b *bytes.Buffer, v reflect.Value) error {
	for v.Kind() == reflect.Interface || v.Kind() == reflect.Pointer {
		if v.IsNil() {
			b.WriteString("null")
			return nil
		}
		if v.Kind() == reflect.Pointer && v.Type().Implements(marshaler) && v.Elem().Kind() != reflect.Float64 {
			break
		}
		v = v.Elem()
	}
	switch {
	case v.Kind() == reflect.Float32 || v.Kind() == reflect.Float64:
		data, _ := Float(v.Float()).MarshalJSON()
		b.Write(data)
		return nil
	case v.Type().Implements(marshaler), v.Kind() != reflect.Struct && v.Kind() != reflect.Map && v.Kind() != reflect.Slice && v.Kind() != reflect.Array:
		data, err := json.Marshal(v.Interface())
		if err != nil {
			return err
		}
		b.Write(data)
		return nil
	}
	switch v.Kind() {
	case reflect.Struct:
		b.WriteByte('{')
		first := true
		for i := range v.NumField() {
			f := v.Type().Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			fv := v.Field(i)
			if strings.Contains(opts, "omitempty") && fv.IsZero() {
				continue
			}
			if !first {
				b.WriteByte(',')
			}
			first = false
			key, _ := json.Marshal(name)
			b.Write(key)
			b.WriteByte(':')
			if err := guarded(b, fv); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case reflect.Map:
		if v.IsNil() {
			b.WriteString("null")
			return nil
		}
		keys := v.MapKeys()
		names := make([]string, len(keys))
		for i, k := range keys {
			names[i] = fmt.Sprint(k.Interface())
		}
		order := make([]int, len(keys))
		for i := range order {
			order[i] = i
		}
		sort.Slice(order, func(i, j int) bool { return names[order[i]] < names[order[j]] })
		b.WriteByte('{')
		for n, i := range order {
			if n > 0 {
				b.WriteByte(',')
			}
			key, _ := json.Marshal(names[i])
			b.Write(key)
			b.WriteByte(':')
			if err := guarded(b, v.MapIndex(keys[i])); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	default:
		if v.Kind() == reflect.Slice && v.IsNil() {
			b.WriteString("null")
			return nil
		}
		b.WriteByte('[')
		for i := range v.Len() {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := guarded(b, v.Index(i)); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	}
	return nil
}

var marshaler = reflect.TypeFor[json.Marshaler]()
