package stencil

import (
	"bytes"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"heat/internal/asmgen"
)

// The committed assembly and its Go declarations are what internal/asmgen
// generates now: `go generate ./stencil` rewrites them.
func TestAssemblyGenerated(t *testing.T) {
	asm, decl, err := asmgen.Stencil()
	require.NoError(t, err)
	for _, f := range []struct {
		name string
		want []byte
	}{{"kernel_amd64.s", asm}, {"kernel_amd64_decl.go", decl}} {
		got, err := os.ReadFile(f.name)
		require.NoError(t, err)
		require.True(t, bytes.Equal(f.want, got), "%s differs from internal/asmgen's output: run go generate ./stencil", f.name)
	}
}
