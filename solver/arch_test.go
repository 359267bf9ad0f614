package solver

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The solver's arithmetic gives the same bits on every architecture. Go
// fuses a product and a sum into one rounding (a fused multiply–add) on
// arm64 wherever an explicit float64() conversion does not stop it, and a
// field's bits then depend on the machine: these fingerprints were recorded
// on amd64, and CI runs this package on arm64 under qemu as well. Fields
// made with math.Sin or math.Exp are left out: Go's own elementary
// functions are fused on arm64 (a sine initial field differs there in its
// last bits). Before the products on these paths were rounded on their
// own, arm64 gave other bits for Crank–Nicolson, SDIRK4 and the media's
// backward Euler.
func TestTheSameBitsOnEveryArchitecture(t *testing.T) {
	media := randomMedia([]int{32, 32}, 17, true, true)
	for _, c := range []struct {
		name string
		spec func() Spec
		want string
	}{
		{"explicit 3D", func() Spec {
			s := heatSpec([]int{16, 16, 12})
			s.Initial, s.Source, s.Steps = Random(s.Shape, 3, 1, 0), Random(s.Shape, 4, 2, -1), 20
			return s
		}, "5ffbab6bbd1931c33f2e86b5328662e1890d5ae6907dc9512cc843a69211ada1"},
		{"crank-nicolson, multigrid", func() Spec {
			s := heatSpec([]int{48, 40})
			s.Scheme, s.Multigrid, s.DT, s.Steps, s.Tolerance = CrankNicolson, true, 1e-3, 5, 1e-10
			s.Initial, s.Source = Random(s.Shape, 5, 1, 0), Random(s.Shape, 6, 3, -1)
			return s
		}, "301713495ca91238b8874fa2368de889decf064a143e88461fbf1d61af5da800"},
		{"sdirk4, multigrid", func() Spec {
			s := heatSpec([]int{48, 40})
			s.Scheme, s.Multigrid, s.DT, s.Steps, s.Tolerance = SDIRK4, true, 1e-2, 2, 1e-10
			s.Initial = Random(s.Shape, 5, 1, 0)
			return s
		}, "ad75c9330e34cbab7b2e521d908143ab5a32df88cc0b5cf0c1c5c4108e2bac20"},
		{"backward euler in media, mgcg", func() Spec {
			s := heatSpec([]int{32, 32})
			s.Scheme, s.Multigrid, s.DT, s.Steps, s.Tolerance = BackwardEuler, true, 1e-3, 3, 1e-8
			s.Media, s.Faces = media.fn(), faces(2, Face{Kind: Dirichlet, Value: 1})
			s.Initial, s.Source = Random(s.Shape, 7, 1, 0), Random(s.Shape, 8, 2, -1)
			return s
		}, "4d17f5f228d3ea31ba3d8de2ec75ec2228c232d7c550decd546dc0f10290e7ad"},
		{"crank-nicolson in media, plain cycles handing over to mgcg", func() Spec {
			g := heldDisc([]int{48, 48}, true)
			s := heatSpec(g.shape)
			s.Scheme, s.Multigrid, s.DT, s.Steps, s.Tolerance = CrankNicolson, true, 0.01, 2, 1e-12
			s.Media, s.Faces, s.Initial = g.fn(), faces(2, Face{Kind: Dirichlet}), Constant(0)
			return s
		}, "cf8a03e1c49f3f4825ea9542a6cb1381939a8534234f20f54a1b4f840c3845c8"},
		{"poisson in media, mgcg", func() Spec {
			s := heatSpec([]int{32, 32})
			s.Equation, s.Multigrid, s.CG, s.Tolerance = Poisson, true, true, 1e-10
			s.Media, s.Faces = media.fn(), faces(2, Face{Kind: Dirichlet, Value: 1})
			s.Initial, s.Source = Constant(0), Random(s.Shape, 9, 2, -1)
			return s
		}, "3c556eb48c8f5f8c2f31745e04ea16856ec8364f5627381a404fa1a70895d67e"},
	} {
		got := fingerprint(run(t, 1, c.spec()).field)
		t.Logf("%s: %s", c.name, got)
		require.Equal(t, c.want, got, c.name)
	}
}
