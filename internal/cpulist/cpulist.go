// Package cpulist reads the CPU lists Linux writes ("0-3,8,10-11": the
// online CPUs, a process's affinity) and counts the host's CPUs.
package cpulist

import (
	"os"
	"strconv"
	"strings"
)

// Parse reads a CPU list into a mask indexed by CPU number; false if s is
// not one.
func Parse(s string) ([]bool, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, false
	}
	var mask []bool
	for part := range strings.SplitSeq(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		b := a
		if err == nil && isRange {
			b, err = strconv.Atoi(hi)
		}
		if err != nil || a < 0 || b < a || b >= 1<<16 {
			return nil, false
		}
		for len(mask) <= b {
			mask = append(mask, false)
		}
		for c := a; c <= b; c++ {
			mask[c] = true
		}
	}
	return mask, true
}

// Count is the number of CPUs of a CPU list; 0 when it is not one.
func Count(list string) int {
	mask, _ := Parse(list)
	n := 0
	for _, on := range mask {
		if on {
			n++
		}
	}
	return n
}

// Online is the number of CPUs of the host, from
// /sys/devices/system/cpu/online, or 0 if unknown.
func Online() int {
	data, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return 0
	}
	return Count(string(data))
}
