// Package report defines the run report: the JSON document every run writes
// to <out>/report.json (and to --report FILE). Scripts and tests rely on its
// field names; DESIGN.md lists the contract.
package report

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"heat/internal/atomicfile"
)

// Report is one run's outcome.
type Report struct {
	Version     string       `json:"version"`
	GoVersion   string       `json:"go_version"`
	Transport   string       `json:"transport"` // "local" or "mpi"
	MPILibrary  string       `json:"mpi_library,omitempty"`
	Config      any          `json:"config"` // the resolved config
	Ranks       int          `json:"ranks"`
	Threads     int          `json:"threads"` // worker goroutines per rank
	Dims        []int        `json:"dims"`    // process grid, C order
	Steps       int          `json:"steps"`   // steps (heat) or iterations (poisson) done
	SimTime     float64      `json:"sim_time"`
	Converged   *bool        `json:"converged"` // poisson only; null for heat
	Residual    float64      `json:"residual"`  // max |Δu| at the last check
	WallS       float64      `json:"wall_s"`    // time stepping, setup and final gather excluded
	MUpdatesPS  float64      `json:"mupdates_per_s"`
	Field       Field        `json:"field"`
	Solver      *Solver      `json:"solver,omitempty"` // how the run was solved
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
}

// Field summarises the final global field (interior cells).
type Field struct {
	// SHA256 is over the global values in C order, each as 8 little-endian
	// IEEE-754 bytes; empty when output.fingerprint is false.
	SHA256 string  `json:"sha256"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	Mean   float64 `json:"mean"`
	L2     float64 `json:"l2"` // sqrt(Σ u²) over all cells
}

// Solver is how the run was solved: explicit steps, Jacobi sweeps, or
// multigrid (Poisson, implicit heat steps).
type Solver struct {
	Kind     string `json:"kind"`             // "explicit", "jacobi" or "multigrid"
	Scheme   string `json:"scheme,omitempty"` // heat: "explicit", "backward-euler", "crank-nicolson"
	Smoother string `json:"smoother,omitempty"`
	Cycle    string `json:"cycle,omitempty"`  // "v", "w", "fmg" (one FMG cycle, then V-cycles)
	Cycles   int    `json:"cycles,omitempty"` // multigrid cycles done (all steps together for heat)
	// ConvergenceFactor is the geometric mean of the residual reduction
	// per cycle (Poisson; null when undefined); CyclesPerStep the mean
	// cycles of an implicit step.
	ConvergenceFactor *Float  `json:"convergence_factor,omitempty"`
	CyclesPerStep     float64 `json:"cycles_per_step,omitempty"`
	// ResidualHistory is the relative residual ‖f−Au‖∞/‖f‖∞ after each
	// cycle (Poisson) or after each implicit step's last cycle (heat).
	ResidualHistory []Float `json:"residual_history,omitempty"`
	// Stalled says the cycles stopped reducing the residual above
	// run.tolerance: the rounding floor of the grid was reached.
	Stalled bool    `json:"stalled,omitempty"`
	Levels  []Level `json:"levels,omitempty"`
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

// Float is a float64 that is null in JSON when not finite.
type Float float64

// MarshalJSON writes f, or null for NaN and ±Inf.
func (f Float) MarshalJSON() ([]byte, error) {
	x := float64(f)
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return []byte("null"), nil
	}
	return json.Marshal(x)
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

// Checkpoint is one checkpoint written by the run.
type Checkpoint struct {
	Step   int     `json:"step"`
	Path   string  `json:"path"`
	Bytes  int64   `json:"bytes"`
	WriteS float64 `json:"write_s"`
}

// Summarise computes the field summary of a global field in C order.
func Summarise(u []float64, fingerprint bool) Field {
	f := Field{Min: math.Inf(1), Max: math.Inf(-1)}
	h := sha256.New()
	buf := make([]byte, 0, 8*4096)
	sum, sq := 0.0, 0.0
	for _, x := range u {
		f.Min = min(f.Min, x)
		f.Max = max(f.Max, x)
		sum += x
		sq += x * x
		if fingerprint {
			buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(x))
			if len(buf) == cap(buf) {
				h.Write(buf)
				buf = buf[:0]
			}
		}
	}
	if fingerprint {
		h.Write(buf)
		f.SHA256 = hex.EncodeToString(h.Sum(nil))
	}
	if len(u) > 0 {
		f.Mean = sum / float64(len(u))
	}
	f.L2 = math.Sqrt(sq)
	return f
}

// Write stores r as indented JSON in path, creating its directory; a
// script polling the file never reads half a report.
func Write(path string, r *Report) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if dir := filepath.Dir(path); dir != "." {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("report: %w", err)
		}
	}
	if err := atomicfile.Write(path, func(w io.Writer) error {
		_, err := w.Write(append(data, '\n'))
		return err
	}); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}
