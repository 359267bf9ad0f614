package run

import (
	"bufio"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"heat/internal/cpulist"
	"heat/io/report"
	"heat/solver"
)

// buildRecord describes this binary for the run report.
func buildRecord() report.Build {
	b := report.Build{Revision: Revision(), GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, Kernel: solver.KernelName()}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			switch s.Key {
			case "GOAMD64":
				b.GOAMD64 = s.Value
			case "GOEXPERIMENT":
				b.GOEXPERIMENT = s.Value
			case "CGO_ENABLED":
				b.CGO = s.Value == "1"
			}
		}
	}
	if b.GOARCH == "amd64" && b.GOAMD64 == "" {
		b.GOAMD64 = "v1"
	}
	return b
}

// hostRecord describes the machine this process runs on, read once however
// many ranks the process holds.
var hostRecord = sync.OnceValue(readHost)

func readHost() report.Host {
	name, _ := os.Hostname()
	h := report.Host{Name: name, CPUs: cpulist.Online()}
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return h
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() && (h.CPUModel == "" || h.CPUFlags == "") {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(key) {
		case "model name":
			h.CPUModel = strings.TrimSpace(val)
		case "flags":
			var keep []string
			for _, fl := range strings.Fields(val) {
				if slices.Contains(kernelFlags, fl) {
					keep = append(keep, fl)
				}
			}
			h.CPUFlags = strings.Join(keep, " ")
		}
	}
	return h
}

// kernelFlags are the CPU flags that decide which kernels run and how fast.
var kernelFlags = []string{"sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512dq", "neon", "asimd", "sve"}

// affinity is this process's CPU affinity list from /proc/self/status
// (Cpus_allowed_list), "" where unknown.
func affinity() string {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return ""
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// mergeHosts lists the distinct hosts of the ranks, each with its ranks.
func mergeHosts(hosts []report.Host) []report.Host {
	var out []report.Host
	for r, h := range hosts {
		i := slices.IndexFunc(out, func(o report.Host) bool { return o.Name == h.Name })
		if i < 0 {
			h.Ranks = nil
			out = append(out, h)
			i = len(out) - 1
		}
		out[i].Ranks = append(out[i].Ranks, r)
	}
	return out
}
