//go:build unix

package run

import (
	"math"
	"syscall"
)

// selfCPUSeconds is this process's user and system CPU time, all its
// threads (the living and the ended) together: getrusage(RUSAGE_SELF).
func selfCPUSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return math.NaN()
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
