//go:build !unix

package run

import "math"

// selfCPUSeconds is unknown (NaN) off Unix: the report leaves cpu_s out.
func selfCPUSeconds() float64 { return math.NaN() }
