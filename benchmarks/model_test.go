package benchmarks

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"heat/comm"
	"heat/comm/local"
)

func TestCeilLog2(t *testing.T) {
	for n, want := range map[int]int{1: 0, 2: 1, 3: 2, 4: 2, 5: 3, 8: 3, 9: 4, 4096: 12, 4097: 13} {
		require.Equal(t, want, ceilLog2(n), "n = %d", n)
	}
}

// α = 1 µs, β = 1 ns/B, t_cell = 10 ns, one collective every 10 steps.
var testModel = Model{Network: Network{Alpha: 1e-6, Beta: 1e-9}, TCell: 1e-8, Threads: 1, CollectivesPerStep: 0.1}

// Predictions against values worked out by hand from the formula.
func TestModelPredictsByHand(t *testing.T) {
	shape := []int{1024, 1024}

	p, err := testModel.Predict(shape, 1)
	require.NoError(t, err)
	require.Equal(t, []int{1, 1}, p.Dims)
	require.Equal(t, 0, p.Faces)
	require.InDelta(t, 1048576*1e-8, p.StepS, 1e-18, "compute only")

	// 2x2: each rank has one neighbour per axis, 512 cells (4096 B) per face.
	p, err = testModel.Predict(shape, 4)
	require.NoError(t, err)
	require.Equal(t, []int{2, 2}, p.Dims)
	require.Equal(t, 262144, p.BoxCells)
	require.Equal(t, 2, p.Faces)
	require.Equal(t, 8192, p.FaceBytes)
	require.InDelta(t, 2.62144e-3, p.ComputeS, 1e-15)
	require.InDelta(t, 2*(1e-6+4096e-9), p.HaloS, 1e-18)
	require.InDelta(t, 0.1*2*1e-6, p.CollectS, 1e-18)
	require.InDelta(t, 2.631832e-3, p.StepS, 1e-15)

	// 4x4: the busiest rank has four neighbours, 256 cells (2048 B) each.
	p, err = testModel.Predict(shape, 16)
	require.NoError(t, err)
	require.Equal(t, []int{4, 4}, p.Dims)
	require.Equal(t, 4, p.Faces)
	require.InDelta(t, 6.5536e-4+4*(1e-6+2048e-9)+0.1*4*1e-6, p.StepS, 1e-15)

	// Split in two, a periodic axis still has both neighbours (the same rank).
	p, err = testModel.Predict(shape, 2)
	require.NoError(t, err)
	require.Equal(t, []int{2, 1}, p.Dims)
	require.Equal(t, 1, p.Faces)
	pm := testModel
	pm.Periodic = []bool{true, true}
	p, err = pm.Predict(shape, 2)
	require.NoError(t, err)
	require.Equal(t, []int{2, 1}, p.Dims)
	require.Equal(t, 2, p.Faces)
	require.InDelta(t, 2*(1e-6+8192e-9), p.HaloS, 1e-18)

	// Uneven splits: the largest box decides. 1000 over 3 → 334 rows.
	p, err = testModel.Predict([]int{1000, 10}, 3)
	require.NoError(t, err)
	require.Equal(t, []int{3, 1}, p.Dims)
	require.Equal(t, 3340, p.BoxCells)
	require.Equal(t, 2*8*10, p.FaceBytes)
}

func TestModelStrongAndWeakSeries(t *testing.T) {
	ps := testModel.Strong([]int{1024, 1024}, []int{1, 4, 16})
	require.Len(t, ps, 3)
	require.Equal(t, [2]float64{1, 1}, [2]float64{ps[0].Speedup, ps[0].Efficiency})
	want := 1048576e-8 / 6.67952e-4
	require.InDelta(t, want, ps[2].Speedup, 1e-9)
	require.InDelta(t, want/16, ps[2].Efficiency, 1e-9)

	// The series stops where the grid cannot be split any more.
	require.Len(t, testModel.Strong([]int{4, 4}, []int{1, 2, 4, 8, 16, 32}), 5)

	// Weak: 256² per core; at 4 ranks the grid is 512², each rank computes
	// the base's cells and adds two faces of 256 cells and 2 reductions.
	ws := testModel.Weak([]int{256, 256}, []int{1, 4})
	require.Len(t, ws, 2)
	require.Equal(t, []int{512, 512}, ws[1].Shape)
	step4 := 65536e-8 + 2*(1e-6+2048e-9) + 0.1*2*1e-6
	require.InDelta(t, step4, ws[1].StepS, 1e-15)
	require.InDelta(t, 65536e-8/step4, ws[1].Efficiency, 1e-12)
	require.InDelta(t, 4*65536e-8/step4, ws[1].Speedup, 1e-12)

	// With 2 threads per rank a rank is 2 cores: the weak grid doubles per rank.
	two := testModel
	two.Threads = 2
	ws = two.Weak([]int{256, 256}, []int{1, 2})
	require.Equal(t, []int{512, 256}, ws[0].Shape)
	require.Equal(t, []int{512, 512}, ws[1].Shape)
	require.Equal(t, 4, ws[1].Cores)
}

func TestPredictRanks(t *testing.T) {
	require.Equal(t, []int{1, 2, 4, 6, 8, 16}, PredictRanks(1, 16, 6, 32))
	require.Equal(t, []int{3, 4, 8, 16}, PredictRanks(3, 16))
	require.Equal(t, []int{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096}, PredictRanks(1, 4096))
}

func TestFitModelFromTheSmallestPoint(t *testing.T) {
	base := PointSummary{Point: 1, Resources: Resources{1, 2}, Rep: RunMetrics{Steps: 100, SlowestCells: 1000,
		SlowestTime: Breakdown{Compute: 2}, CollectivesPerStep: 0.1}}
	m, err := FitModel(base, Network{Alpha: 1e-6, Beta: 1e-10}, []bool{false, true})
	require.NoError(t, err)
	require.InDelta(t, 2e-5, m.TCell, 1e-20)
	require.Equal(t, 2, m.Threads)
	require.Equal(t, 0.1, m.CollectivesPerStep)
	require.Equal(t, []bool{false, true}, m.Periodic)

	base.Rep.SlowestTime.Compute = 0
	_, err = FitModel(base, Network{}, nil)
	require.ErrorContains(t, err, "no compute time to fit t_cell (0 s over 1000 cells, 100 steps)")
}

func TestFitNetwork(t *testing.T) {
	var exact []PingPongSample
	for _, b := range PingPongSizes() {
		exact = append(exact, PingPongSample{Bytes: b, OneWayS: 2e-6 + float64(b)*1e-10})
	}
	net, err := FitNetwork(exact)
	require.NoError(t, err)
	require.InEpsilon(t, 2e-6, net.Alpha, 1e-9)
	require.InEpsilon(t, 1e-10, net.Beta, 1e-9)
	require.InDelta(t, 10.0, net.Bandwidth(), 1e-6)

	// A line through negative latency is clamped to 0.
	net, err = FitNetwork([]PingPongSample{{1000, 1e-6}, {2000, 3e-6}})
	require.NoError(t, err)
	require.Equal(t, 0.0, net.Alpha)
	require.InEpsilon(t, 2e-9, net.Beta, 1e-9)

	_, err = FitNetwork(exact[:1])
	require.ErrorContains(t, err, "needs 2 or more message sizes, got 1")
	_, err = FitNetwork([]PingPongSample{{8, 1e-6}, {8, 2e-6}})
	require.ErrorContains(t, err, "different message sizes, got only 8 bytes")
	_, err = FitNetwork([]PingPongSample{{8, 1e-6}, {64, 0}})
	require.ErrorContains(t, err, "ping-pong of 64 bytes took 0 s")
}

// A real sweep over in-process ranks: positive times, one fit on both ranks.
func TestMeasureNetworkInProcess(t *testing.T) {
	got := make([]Network, 2)
	err := local.Run(2, func(c comm.Comm) error {
		s, net, err := MeasureNetwork(c, []int{8, 4096, 65536}, 2*time.Millisecond)
		if err != nil {
			return err
		}
		for _, x := range s {
			if x.OneWayS <= 0 {
				t.Errorf("rank %d: %d bytes took %g s", c.Rank(), x.Bytes, x.OneWayS)
			}
		}
		got[c.Rank()] = net
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, got[0], got[1])
	require.GreaterOrEqual(t, got[0].Alpha, 0.0)
	require.GreaterOrEqual(t, got[0].Beta, 0.0)

	err = local.Run(1, func(c comm.Comm) error { _, _, err := MeasureNetwork(c, []int{8}, time.Millisecond); return err })
	require.ErrorContains(t, err, "ping-pong needs 2 ranks, the world has 1")
}
