package wait

import (
	"bytes"
	"os"
	"runtime"
	"strconv"
	"sync"

	"heat/internal/cpulist"
)

// crowded reports whether more threads are runnable on this machine now
// than it has CPUs, from /proc/loadavg's fourth field ("running/total":
// the runnable scheduling entities, the reader among them) against the
// online CPUs (both the whole host's: a job confined to some cores of a
// busy node is not crowded by the jobs on the others); where that cannot
// be read, it reports unknown. A spin that finds
// its clock jumped asks it: on a virtual machine the hypervisor stops a
// vCPU now and then although no other thread of the guest wants the core
// (spinning there harms nobody), whereas a guest with more runnable
// threads than CPUs is one where a spinner holds up someone.
func crowded(unknown bool) bool {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return unknown
	}
	n, ok := runnable(data)
	if !ok {
		return unknown
	}
	return n > hostCPUs()
}

// hostCPUs is the host's online CPUs (this process's where unknown).
var hostCPUs = sync.OnceValue(func() int {
	if n := cpulist.Online(); n > 0 {
		return n
	}
	return runtime.NumCPU()
})

// runnable parses the running count of a /proc/loadavg line
// ("0.50 0.40 0.30 3/250 12345").
func runnable(line []byte) (int, bool) {
	f := bytes.Fields(line)
	if len(f) < 4 {
		return 0, false
	}
	r, _, ok := bytes.Cut(f[3], []byte("/"))
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(string(r))
	return n, err == nil && n >= 0
}
