package expr

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// letChain is a chain of n lets, each naming the one before twice:
// a1 = sin(x), a(i+1) = a(i)*0.5 + a(i)*0.25 + t; it gives a(n).
func letChain(n int) string {
	var b strings.Builder
	b.WriteString("let a1 = sin(x); ")
	for i := 2; i <= n; i++ {
		fmt.Fprintf(&b, "let a%d = a%d*0.5 + a%d*0.25 + t; ", i, i-1, i-1)
	}
	fmt.Fprintf(&b, "a%d", n)
	return b.String()
}

// A chain of lets is evaluated in time linear in its length: each binding
// once a point. The closures evaluated a binding wherever it was named,
// 2^n times for a chain of n (18 lets took 41 s over a field, 40 never
// ended); 60 would now take longer than the universe's age if evaluation
// were exponential again.
func TestLetChainEvaluatedOnce(t *testing.T) {
	ev := mustCompile(t, letChain(60)).NewEvaluator()
	for _, p := range points {
		want := math.Sin(p[0])
		for range 59 {
			want = want*0.5 + want*0.25 + p[3]
		}
		if got := ev.Eval(p[0], p[1], p[2], p[3]); math.Float64bits(got) != math.Float64bits(want) {
			t.Errorf("60 lets at %v = %v, want %v", p, got, want)
		}
	}
	// Folded where they are constant: the same chain of numbers is one.
	if v, ok := mustCompile(t, strings.NewReplacer("sin(x)", "1", "+ t", "+ 1").Replace(letChain(60))).Constant(); !ok || math.IsNaN(v) {
		t.Errorf("a chain of constant lets is not constant: %v %v", v, ok)
	}
}

// Lets in every position give expr-lang's VM's bits: a binding of true or
// false, one name in two scopes, a binding read in one branch only or not at all,
// lets inside a binding's value and inside a function's argument, a
// binding of a bare variable, one of t alone (AtTime folds it).
func TestLetsMatchExprLangVM(t *testing.T) {
	corpus := []string{
		letChain(12),
		"let c = x < 0.5; let d = c && y < 0.5; d ? 1 : c ? 2 : 3",
		"let a = x * 2; (let b = a + y; b * a) + (let b = a - y; b * b)",
		"let a = exp(x); let b = log(2 + y); t > 0.1 ? a : b",
		"let unused = sqrt(x); y * 2",
		"let a = (let b = x + 1; b * b); a - a / 3",
		"sin(let b = x * y; b + b) + (let c = x; c * c)",
		"let a = x; let b = t * 3; a * b + b",
		"let w = t < 0.1; let s = (x - 0.5)^2; w ? s : s * 2",
	}
	for _, src := range corpus {
		e := mustCompile(t, src)
		ref := newReference(t, src)
		for _, p := range points {
			want := ref.eval(t, p[0], p[1], p[2], p[3])
			for _, ev := range []*Evaluator{e.NewEvaluator(), e.AtTime(p[3]).NewEvaluator()} {
				got := ev.Eval(p[0], p[1], p[2], p[3])
				if math.Float64bits(got) != math.Float64bits(want) {
					t.Errorf("%s at %v = %v, expr-lang's VM %v", src, p, got, want)
				}
			}
		}
	}
}

// Brackets nested deeper than MaxDepth and texts longer than MaxLength
// are refused naming the key, the depth (or length) and where, before
// expr-lang parses them: 1,000,000 nested parentheses ended in a Go stack
// overflow dump (11 s, 1 GB). Brackets in comments do not count.
func TestNestingAndLengthBounded(t *testing.T) {
	nest := func(n int) string { return strings.Repeat("(", n) + "x" + strings.Repeat(")", n) }
	mustCompile(t, nest(MaxDepth))
	mustCompile(t, "x // "+strings.Repeat("(", 2*MaxDepth))
	mustCompile(t, "x /* "+strings.Repeat("[", 2*MaxDepth)+" */ + 1")
	for _, c := range []struct{ src, want string }{
		{nest(1000000), "boundary.x_hi.value: column 201: brackets nest 1000000 deep, more than the 200 an expression may"},
		{nest(MaxDepth + 1), "boundary.x_hi.value: column 201: brackets nest 201 deep, more than the 200 an expression may"},
		{"1 +\n  min(" + nest(300) + ")", "boundary.x_hi.value: line 2, column 206: brackets nest 301 deep"},
		{"x" + strings.Repeat(" ", MaxLength), "boundary.x_hi.value: is 65537 bytes long, more than the 65536 an expression may take"},
		{strings.Repeat("x+", 20000) + "x", "boundary.x_hi.value: column 10002: has more than 10000 numbers, names and operators"},
	} {
		_, err := Compile("boundary.x_hi.value", c.src)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%.30q…: %v, want %s…", c.src, err, c.want)
		}
	}
}
