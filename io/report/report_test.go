package report

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
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
