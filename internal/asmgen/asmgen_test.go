package asmgen

import (
	"regexp"
	"strings"
	"testing"
)

// The AVX2 kernels use only the 16 registers VEX encodes (a register from
// 16 on would need EVEX, AVX-512, and VBLENDVPD has no such form), and no
// kernel fuses a multiply and an add: each product is rounded on its own.
// The AVX-512 kernels' scalar tails (VBLENDVPD on XMM) keep to them too.
func TestKernelsKeepToTheirInstructionSet(t *testing.T) {
	asm, _, err := Stencil()
	if err != nil {
		t.Fatal(err)
	}
	high := regexp.MustCompile(`\b[XYZ](1[6-9]|2[0-9]|3[01])\b`)
	fused := regexp.MustCompile(`\bVFN?M(ADD|SUB)`)
	zmm := regexp.MustCompile(`\bZ\d+\b`)
	fn, kernels := "", 0
	for line := range strings.Lines(string(asm)) {
		if strings.HasPrefix(line, "TEXT ") {
			fn = strings.Fields(line)[1]
			kernels++
			continue
		}
		switch {
		case fused.MatchString(line):
			t.Errorf("%s fuses a multiply and an add: %s", fn, strings.TrimSpace(line))
		case strings.Contains(fn, "AVX2") && (high.MatchString(line) || zmm.MatchString(line)):
			t.Errorf("%s uses an AVX-512 register: %s", fn, strings.TrimSpace(line))
		case strings.HasPrefix(strings.TrimSpace(line), "VBLENDVPD") && high.MatchString(line):
			t.Errorf("%s blends with an EVEX-only register: %s", fn, strings.TrimSpace(line))
		}
	}
	if kernels == 0 {
		t.Fatal("no kernels generated")
	}
}
