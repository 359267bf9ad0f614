package run

import (
	"bytes"
	"math"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"heat/internal/cpulist"
	"heat/io/config"
	"heat/io/report"
)

// A /proc/stat of four CPUs (Linux 6.x, ten fields a CPU).
const procStat = `cpu  1000 20 300 90000 40 5 6 7 0 0
cpu0 100 1 30 20000 10 1 2 3 0 0
cpu1 200 2 60 25000 10 1 1 1 50 0
cpu2 300 3 90 22000 10 1 1 2 0 0
cpu3 400 14 120 23000 10 2 2 1 0 0
intr 123456 0 9 0 0
ctxt 987654
btime 1767225600
processes 4242
procs_running 3
procs_blocked 0
softirq 5555 0 1 2 3 4 5 6 7 8 9
`

// Busy is user+nice+system+irq+softirq+steal, over the CPUs of the mask;
// the total line and the other lines are not CPUs.
func TestBusyTicksProcStat(t *testing.T) {
	busy := []uint64{100 + 1 + 30 + 1 + 2 + 3, 200 + 2 + 60 + 1 + 1 + 1, 300 + 3 + 90 + 1 + 1 + 2, 400 + 14 + 120 + 2 + 2 + 1}
	ticks, n, ok := busyTicks(strings.NewReader(procStat), nil)
	require.True(t, ok)
	require.Equal(t, 4, n)
	require.Equal(t, busy[0]+busy[1]+busy[2]+busy[3], ticks)

	mask, ok := cpulist.Parse("1,3")
	require.True(t, ok)
	ticks, n, ok = busyTicks(strings.NewReader(procStat), mask)
	require.True(t, ok)
	require.Equal(t, 2, n)
	require.Equal(t, busy[1]+busy[3], ticks)

	// A line without steal (before Linux 2.6.11), a mask beyond the CPUs
	// listed, no CPU lines at all.
	_, _, ok = busyTicks(strings.NewReader("cpu0 1 2 3 4 5 6 7\n"), nil)
	require.False(t, ok, "too few fields: not a CPU line")
	mask, _ = cpulist.Parse("6-7")
	_, n, ok = busyTicks(strings.NewReader(procStat), mask)
	require.False(t, ok)
	require.Zero(t, n)
	_, _, ok = busyTicks(strings.NewReader("intr 1 2\n"), nil)
	require.False(t, ok)
}

// Others is the mask's busy time less the process's own over wall × CPUs,
// clamped to [0, 1]; unknown (NaN) where /proc/stat was not read.
func TestLoadBetween(t *testing.T) {
	a := cpuSample{self: 1, busy: 100, cpus: 2}
	b := cpuSample{self: 2, busy: 102.1, cpus: 2} // 1 s own, 1.1 s others' of 2 × 2 s
	l := loadBetween(a, b, 2*time.Second)
	require.InDelta(t, 1, l.CPUS, 1e-12)
	require.InDelta(t, 1.1/4, l.Others, 1e-12)
	require.Equal(t, 2, l.CPUs)

	b.busy = 100.9 // the ticks' rounding: less busy than the process ran
	require.Zero(t, loadBetween(a, b, 2*time.Second).Others)
	b.busy = 110
	require.Equal(t, 1.0, loadBetween(a, b, 2*time.Second).Others)

	nan := cpuSample{self: 2, busy: math.NaN()}
	l = loadBetween(a, nan, 2*time.Second)
	require.InDelta(t, 1, l.CPUS, 1e-12)
	require.True(t, math.IsNaN(l.Others))
	require.True(t, math.IsNaN(loadBetween(a, cpuSample{self: 2, busy: 101, cpus: 3}, time.Second).Others), "the CPUs changed")
}

// The summary's line shows on a busy machine only, over a run long enough
// to tell.
func TestBusyLine(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	rep := &report.Report{WallS: 1.1, CPUS: f(1.02), Others: f(0.47)}
	require.Equal(t, "machine busy: other processes took 47% of this run's 2 CPUs (cpu 1.02 s of 2 × 1.10 s wall)", busyLine(rep, 2))
	require.Contains(t, busyLine(rep, 1), "of this run's 1 CPU (cpu")

	rep.Others = f(0.09)
	require.Empty(t, busyLine(rep, 2), "a quiet machine")
	rep.Others, rep.WallS = f(0.5), 0.2
	require.Empty(t, busyLine(rep, 2), "too short to tell one tick from contention")
	rep.WallS, rep.Others = 1.1, nil
	require.Empty(t, busyLine(rep, 2), "not measured")

	// In the summary, below the rate; a quiet run's summary is as it was.
	cfg := config.Default()
	rep = &report.Report{Ranks: 1, Threads: 2, Dims: []int{1, 1}, Steps: 10, WallS: 1.1, CPUS: f(1.02), Others: f(0.47)}
	var b bytes.Buffer
	printSummary(&b, cfg, rep, 2, "r.json")
	lines := strings.Split(b.String(), "\n")
	require.Contains(t, lines[0], "Mupdates/s)")
	require.True(t, strings.HasPrefix(lines[1], "machine busy: "), b.String())
	rep.Others = f(0)
	b.Reset()
	printSummary(&b, cfg, rep, 2, "r.json")
	require.NotContains(t, b.String(), "machine busy")
}

// A real run's report has the process's CPU time and others' share.
func TestRunReportCPU(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("cpu_s and others are measured on Linux")
	}
	out := filepath.Join(t.TempDir(), "out")
	r, err := runWith(t, "", "--set", "grid.shape=[128,128]", "--steps", "200", "--out", out)
	require.NoError(t, err)
	require.NotNil(t, r.CPUS)
	require.NotNil(t, r.Others)
	require.Greater(t, *r.CPUS, 0.0)
	require.GreaterOrEqual(t, *r.Others, 0.0)
	require.LessOrEqual(t, *r.Others, 1.0)

	// And what its waits did: 2 ranks × 2 threads wait for each other.
	r, err = runWith(t, "", "--set", "grid.shape=[128,128]", "--steps", "200", "--ranks", "2", "--threads", "2", "--out", out+"2")
	require.NoError(t, err)
	require.NotNil(t, r.Waits)
	w := r.Waits
	require.Positive(t, w.Spun+w.Yielded+w.Parked, "%+v", *w)
}
