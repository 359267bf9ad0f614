package report

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"heat/io/config"
)

// The fingerprint is SHA-256 over the values as 8 little-endian bytes each,
// whatever the length (the writer hashes in blocks of 4096 values).
func TestSummariseFingerprint(t *testing.T) {
	for _, n := range []int{0, 1, 4095, 4096, 4097, 3*4096 + 5} {
		u := make([]float64, n)
		raw := make([]byte, 8*n)
		for i := range u {
			u[i] = math.Sin(float64(i)) * 1e3
			binary.LittleEndian.PutUint64(raw[8*i:], math.Float64bits(u[i]))
		}
		sum := sha256.Sum256(raw)
		f := Summarise(u, true)
		require.Equal(t, hex.EncodeToString(sum[:]), f.SHA256, "n=%d", n)
		require.Empty(t, Summarise(u, false).SHA256)
	}
	f := Summarise([]float64{3, -4, 0}, true)
	require.Equal(t, Float(-4), f.Min)
	require.Equal(t, Float(3), f.Max)
	require.InDelta(t, -1.0/3, float64(f.Mean), 1e-15)
	require.Equal(t, Float(5), f.L2)
	// One little-endian 1.0: 00 00 00 00 00 00 f0 3f.
	one := sha256.Sum256([]byte{0, 0, 0, 0, 0, 0, 0xf0, 0x3f})
	require.Equal(t, hex.EncodeToString(one[:]), Summarise([]float64{1}, true).SHA256)
}

// Non-finite statistics keep the JSON valid and read back as they were.
func TestFloatNonFinite(t *testing.T) {
	in := Field{Min: Float(math.Inf(-1)), Max: Float(math.Inf(1)), Mean: Float(math.NaN()), L2: 2.5}
	data, err := json.Marshal(in)
	require.NoError(t, err)
	require.True(t, json.Valid(data))
	require.JSONEq(t, `{"sha256":"","min":"-Inf","max":"+Inf","mean":"NaN","l2":2.5}`, string(data))
	var out Field
	require.NoError(t, json.Unmarshal(data, &out))
	require.True(t, math.IsInf(float64(out.Min), -1))
	require.True(t, math.IsInf(float64(out.Max), 1))
	require.True(t, math.IsNaN(float64(out.Mean)))
	require.Equal(t, Float(2.5), out.L2)
	var f Float
	require.NoError(t, json.Unmarshal([]byte("null"), &f))
	require.True(t, math.IsNaN(float64(f)))
	require.Error(t, json.Unmarshal([]byte(`"big"`), &f))
}

// cpu_s and others are written where measured (a quiet machine's others
// of 0 included) and left out where not.
func TestReportCPUFields(t *testing.T) {
	cpu, others := 1.25, 0.0
	data, err := json.Marshal(Report{CPUS: &cpu, Others: &others})
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(data, &m))
	require.Equal(t, 1.25, m["cpu_s"])
	require.Equal(t, 0.0, m["others"])

	data, err = json.Marshal(Report{})
	require.NoError(t, err)
	m = nil
	require.NoError(t, json.Unmarshal(data, &m))
	require.NotContains(t, m, "cpu_s")
	require.NotContains(t, m, "others")
}

// A report always parses: a float the types do not guard (the config's
// time step, sim_time) that is not finite is written as Float writes it,
// and a report with none is written exactly as encoding/json writes it.
func TestMarshalNonFiniteConfig(t *testing.T) {
	conv := true
	cf := Float(0.5)
	rep := func() *Report {
		cfg := config.Default()
		return &Report{Status: "completed", Config: cfg, Dims: []int{2, 1}, SimTime: 0.25, Converged: &conv,
			Field: Summarise([]float64{1, 2}, true), Solver: &Solver{Kind: "multigrid", ConvergenceFactor: &cf},
			EnergyBalance: &EnergyBalance{Faces: map[string]Float{"y_lo": 1, "x_hi": -2}},
			PerRank:       []Rank{{Rank: 0}}, Checkpoints: []Checkpoint{}, StartedAt: time.Unix(5, 0).UTC()}
	}
	r := rep()
	want, err := json.MarshalIndent(r, "", "  ")
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, guarded(&b, reflect.ValueOf(r)))
	var got bytes.Buffer
	require.NoError(t, json.Indent(&got, b.Bytes(), "", "  "))
	require.Equal(t, string(want), got.String(), "the fallback writes what encoding/json writes")

	r = rep()
	r.Config.(*config.Config).Equation.DT = config.Step{V: math.Inf(1)}
	r.WallS = math.Inf(-1)
	_, err = json.Marshal(r)
	require.Error(t, err, "encoding/json refuses +Inf: the case the fallback is for")
	data, err := Marshal(r)
	require.NoError(t, err)
	var back map[string]any
	require.NoError(t, json.Unmarshal(data, &back))
	require.Equal(t, "-Inf", back["wall_s"])
	require.Equal(t, "+Inf", back["config"].(map[string]any)["equation"].(map[string]any)["dt"])
	r = rep()
	r.SimTime = Float(math.NaN())
	data, err = json.Marshal(r)
	require.NoError(t, err, "sim_time is a Float")
	var typed Report
	require.NoError(t, json.Unmarshal(data, &typed))
	require.True(t, math.IsNaN(float64(typed.SimTime)))
}
