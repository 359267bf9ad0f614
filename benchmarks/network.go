package benchmarks

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"gonum.org/v1/gonum/stat"

	"heat/comm"
)

// PingPongSample is the one-way time of a message of Bytes bytes.
type PingPongSample struct {
	Bytes   int     `json:"bytes"`
	OneWayS float64 `json:"one_way_s"`
}

// PingPongSizes are the message sizes of a network measurement: 8 B to
// 8 MiB in steps of 8×, then 8 MiB.
func PingPongSizes() []int {
	var s []int
	for b := 8; b < 8<<20; b *= 8 {
		s = append(s, b)
	}
	return append(s, 8<<20)
}

// NetworkResult is a ping-pong sweep and the α–β fit to it.
type NetworkResult struct {
	Transport string           `json:"transport"`
	Samples   []PingPongSample `json:"samples"`
	Network
}

// MeasureNetwork times ping-pongs of every size between ranks 0 and 1 of c
// (collective: every rank calls it with the same arguments) and fits α and
// β. Each size is calibrated with a few round trips and then timed for
// about perSize; the iteration count is agreed (maximum over the ranks), so
// both ends run the same loop. Every rank gets rank 0's times and fit.
func MeasureNetwork(c comm.Comm, sizes []int, perSize time.Duration) ([]PingPongSample, Network, error) {
	if c.Size() < 2 {
		return nil, Network{}, fmt.Errorf("ping-pong needs 2 ranks, the world has %d", c.Size())
	}
	samples := make([]PingPongSample, 0, len(sizes))
	for _, b := range sizes {
		probe, err := PingPong(c, b, 3)
		if err != nil {
			return nil, Network{}, fmt.Errorf("ping-pong of %d bytes: %w", b, err)
		}
		iters := 5.0
		if probe > 0 {
			iters = max(iters, min(1e5, perSize.Seconds()/(2*probe)))
		}
		var agreed [1]float64
		if err := c.Allreduce(comm.Max, []float64{iters}, agreed[:]); err != nil {
			return nil, Network{}, err
		}
		t, err := PingPong(c, b, int(agreed[0]))
		if err != nil {
			return nil, Network{}, fmt.Errorf("ping-pong of %d bytes, %d round trips: %w", b, int(agreed[0]), err)
		}
		samples = append(samples, PingPongSample{Bytes: b, OneWayS: t})
	}
	// Rank 0's clock decides.
	buf := make([]byte, 8*len(samples))
	for i, s := range samples {
		binary.LittleEndian.PutUint64(buf[8*i:], math.Float64bits(s.OneWayS))
	}
	if err := c.Bcast(buf, 0); err != nil {
		return nil, Network{}, err
	}
	for i := range samples {
		samples[i].OneWayS = math.Float64frombits(binary.LittleEndian.Uint64(buf[8*i:]))
	}
	net, err := FitNetwork(samples)
	return samples, net, err
}

// FitNetwork fits t = α + β·bytes to one-way times by least squares
// weighted by 1/t², that is on relative errors: unweighted, the large
// messages' noise would swamp the latency. A negative α or β (noise on a
// transport faster than the sizes resolve) is clamped to 0.
func FitNetwork(samples []PingPongSample) (Network, error) {
	if len(samples) < 2 {
		return Network{}, fmt.Errorf("fitting α and β needs 2 or more message sizes, got %d", len(samples))
	}
	x, y, w := make([]float64, len(samples)), make([]float64, len(samples)), make([]float64, len(samples))
	for i, s := range samples {
		if s.OneWayS <= 0 {
			return Network{}, fmt.Errorf("ping-pong of %d bytes took %g s: need a positive time", s.Bytes, s.OneWayS)
		}
		x[i], y[i], w[i] = float64(s.Bytes), s.OneWayS, 1/(s.OneWayS*s.OneWayS)
	}
	for i := 1; i < len(x); i++ {
		if x[i] != x[0] {
			alpha, beta := stat.LinearRegression(x, y, w, false)
			return Network{Alpha: max(alpha, 0), Beta: max(beta, 0)}, nil
		}
	}
	return Network{}, fmt.Errorf("fitting α and β needs 2 or more different message sizes, got only %d bytes", samples[0].Bytes)
}
