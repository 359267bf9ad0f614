package run

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"heat/internal/cpulist"
	"heat/io/report"
)

// The run's CPU account: how much of the wall time this process ran on a
// CPU (getrusage), and how much of the CPUs it may run on other processes
// took meanwhile (/proc/stat), as the C reference benchmark measures it
// (shared/refbench/jacobi.c, "others"). A run that takes 0.5 s alone and
// 124 s beside another heat says why in its report.
//
// The figures are the process's: with in-process ranks every rank shares
// them; under MPI each process measures itself, the report is rank 0's,
// and another rank's process on the same CPUs counts among the others.

// clockTick is the unit of /proc/stat's CPU times: USER_HZ, 100 a second
// on every Linux architecture (sysconf(_SC_CLK_TCK) there). Others is as
// exact as one tick a CPU.
const clockTick = 10 * time.Millisecond

// cpuSample is a moment's CPU account.
type cpuSample struct {
	self float64 // this process's user + system CPU seconds; NaN where unknown
	busy float64 // busy seconds summed over the CPUs of the mask; NaN where unknown
	cpus int     // the CPUs of the mask that /proc/stat lists
}

// cpuMeter samples the CPU account of this process and of the CPUs of its
// affinity mask, read once when the meter is made.
type cpuMeter struct {
	mask []bool // by CPU number; nil: every CPU
}

func newCPUMeter() cpuMeter {
	mask, _ := cpulist.Parse(affinity())
	return cpuMeter{mask: mask}
}

func (m cpuMeter) sample() cpuSample {
	s := cpuSample{self: selfCPUSeconds(), busy: math.NaN()}
	f, err := os.Open("/proc/stat")
	if err != nil {
		return s
	}
	defer f.Close()
	if ticks, n, ok := busyTicks(f, m.mask); ok {
		s.busy, s.cpus = float64(ticks)*clockTick.Seconds(), n
	}
	return s
}

// cpuLoad is a run's CPU account between two samples over wall.
type cpuLoad struct {
	CPUS   float64 // this process's CPU seconds; NaN where unknown
	Others float64 // share of the mask's CPU time others took, in [0, 1]; NaN where unknown
	CPUs   int     // the CPUs of the mask
}

// loadBetween is the account from a to b, wall apart: the mask's busy time
// less the process's own, over wall × its CPUs, clamped to [0, 1] (the
// ticks' rounding can take it a little outside).
func loadBetween(a, b cpuSample, wall time.Duration) cpuLoad {
	l := cpuLoad{CPUS: b.self - a.self, Others: math.NaN(), CPUs: b.cpus}
	if b.cpus > 0 && a.cpus == b.cpus && wall > 0 && !math.IsNaN(a.busy+b.busy+l.CPUS) {
		o := (b.busy - a.busy - l.CPUS) / (wall.Seconds() * float64(b.cpus))
		l.Others = min(1, max(0, o))
	}
	return l
}

// busyTicks sums the busy ticks of the CPUs in mask (every CPU where mask
// is nil) over /proc/stat's per-CPU lines ("cpuN user nice system idle
// iowait irq softirq steal guest guest_nice"): everything but idle and
// iowait, steal included (guest time is already in user). It returns the
// sum, the CPUs counted, and whether any line was read.
func busyTicks(r io.Reader, mask []bool) (ticks uint64, cpus int, ok bool) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		t, cpu, good := cpuLine(sc.Text())
		if !good || mask != nil && (cpu >= len(mask) || !mask[cpu]) {
			continue
		}
		ticks += t
		cpus++
	}
	return ticks, cpus, cpus > 0 && sc.Err() == nil
}

// cpuLine reads one "cpuN …" line of /proc/stat: its busy ticks and N;
// false for any other line (the "cpu" total among them).
func cpuLine(line string) (busy uint64, cpu int, ok bool) {
	rest, found := strings.CutPrefix(line, "cpu")
	if !found || rest == "" || rest[0] < '0' || rest[0] > '9' {
		return 0, 0, false
	}
	f := strings.Fields(rest)
	if len(f) < 9 { // N and user … steal
		return 0, 0, false
	}
	cpu, err := strconv.Atoi(f[0])
	if err != nil {
		return 0, 0, false
	}
	for i, v := range f[1:9] {
		if i == 3 || i == 4 { // idle, iowait
			continue
		}
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return 0, 0, false
		}
		busy += n
	}
	return busy, cpu, true
}

// The summary says the machine was busy when others took busyShare of
// the run's CPUs or more, over a run long enough (busyMinTicks of its CPUs'
// time) that one tick of another process is not taken for contention.
const (
	busyShare    = 0.10
	busyMinTicks = 50
)

// busyLine is the summary's line on a busy machine, "" on a quiet one:
// others' share of the run's cpus CPUs, and the process's own CPU time
// against what those CPUs offered.
func busyLine(rep *report.Report, cpus int) string {
	if rep.Others == nil || rep.CPUS == nil || cpus < 1 || *rep.Others < busyShare ||
		rep.WallS*float64(cpus) < busyMinTicks*clockTick.Seconds() {
		return ""
	}
	plural := "s"
	if cpus == 1 {
		plural = ""
	}
	return fmt.Sprintf("machine busy: other processes took %.0f%% of this run's %d CPU%s (cpu %.2f s of %d × %.2f s wall)",
		100**rep.Others, cpus, plural, *rep.CPUS, cpus, rep.WallS)
}
