package expr

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	exprlang "github.com/expr-lang/expr"
	"github.com/expr-lang/expr/vm"
)

// points are where the formula tests evaluate: inside the unit square,
// on its edges, and at negative and large coordinates.
var points = [][4]float64{
	{0.5, 0.5, 0, 0}, {0.25, 0.75, 0, 0.05}, {0, 1, 0.5, 0.2}, {1, 0, 0.125, 3},
	{-0.3, 2.5, -1, 86400}, {0.015625, 0.984375, 0.3, 1e-9},
}

// near reports whether a and b agree to a few units in the last place
// (Go may fuse a*b + c where the lowered closures cannot; NaN matches NaN).
func near(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return a == b || math.Abs(a-b) <= 4e-16*math.Max(math.Abs(a), math.Abs(b))
}

func mustCompile(t *testing.T, src string) *Expr {
	t.Helper()
	e, err := Compile("source.expr", src)
	if err != nil {
		t.Fatalf("Compile(%q): %v", src, err)
	}
	return e
}

func TestFormulasAgainstGo(t *testing.T) {
	cases := []struct {
		src  string
		want func(x, y, z, t float64) float64
	}{
		{"1e3*exp(-((x-0.5)^2+(y-0.5)^2)/0.01)", func(x, y, z, t float64) float64 {
			return 1e3 * math.Exp(-((x-0.5)*(x-0.5)+(y-0.5)*(y-0.5))/0.01)
		}},
		{"293 + 5*sin(2*pi*t/86400)", func(x, y, z, t float64) float64 { return 293 + 5*math.Sin(2*math.Pi*t/86400) }},
		{"exp(-t)*sin(pi*x)*sin(pi*y)", func(x, y, z, t float64) float64 { return math.Exp(-t) * math.Sin(math.Pi*x) * math.Sin(math.Pi*y) }},
		{"x*y - z/(1 + t)", func(x, y, z, t float64) float64 { return x*y - z/(1+t) }},
		{"-x + +y - -z", func(x, y, z, t float64) float64 { return -x + y + z }},
		{"7/2 + 5 % 3 + 2*3", func(x, y, z, t float64) float64 { return 3.5 + 2 + 6 }},
		{"e^x", func(x, y, z, t float64) float64 { return math.Pow(math.E, x) }},
		{"let r2 = (x-0.5)^2 + (y-0.5)^2; r2 < 0.01 ? 1 - r2 : 0", func(x, y, z, t float64) float64 {
			r2 := (x-0.5)*(x-0.5) + (y-0.5)*(y-0.5)
			if r2 < 0.01 {
				return 1 - r2
			}
			return 0
		}},
	}
	for _, c := range cases {
		ev := mustCompile(t, c.src).NewEvaluator()
		for _, p := range points {
			got, want := ev.Eval(p[0], p[1], p[2], p[3]), c.want(p[0], p[1], p[2], p[3])
			if !near(got, want) {
				t.Errorf("%s at %v = %v, want %v", c.src, p, got, want)
			}
		}
	}
}

// reference evaluates src with expr-lang's own compiler and VM, on the
// same options: what the lowered closures must reproduce bit for bit.
type reference struct {
	prog *vm.Program
	vm   vm.VM
}

func newReference(t *testing.T, src string) *reference {
	t.Helper()
	p, err := exprlang.Compile(src, options()...)
	if err != nil {
		t.Fatalf("expr-lang compile %q: %v", src, err)
	}
	return &reference{prog: p}
}

func (r *reference) eval(t *testing.T, x, y, z, tm float64) float64 {
	t.Helper()
	out, err := r.vm.Run(r.prog, env{X: x, Y: y, Z: z, T: tm, Pi: math.Pi, E: math.E})
	if err != nil {
		t.Fatalf("expr-lang run: %v", err)
	}
	return out.(float64)
}

func TestBitsMatchExprLangVM(t *testing.T) {
	corpus := []string{
		"1e3*exp(-((x-0.5)^2+(y-0.5)^2)/0.01)",
		"t < 0.1 ? 0 : 1e3*exp(-((x-0.5)**2+(y-0.5)**2)/0.01)",
		"300 + 20*sin(2*pi*t/86400)",
		"exp(-t)*sin(pi*x)*sin(pi*y)*(2*pi^2 - 1)",
		"x^3 - 2*x^2*y + y^0.5 - z^-1.5",
		"(x-y)/(x+y+1) * (t - 1) / 3 + 1/(1+x*x)",
		"x > 0.5 && y < 0.5 || !(t >= 1) ? x : -y",
		"x == y ? 1 : x != 0.5 ? 2 : 3",
		"(x < 0.5) == (y < 0.5) ? 1 : 0",
		"if x < 0.5 { 1 + x } else { 2 - y }",
		"min(x, y, 0.3) + max(x, z) + min(t) + abs(x - y)",
		"atan2(y - 0.5, x - 0.5) + hypot(x, y) + pow(x, y)",
		"floor(10*x) + ceil(10*y) + round(10*z)",
		"sqrt(x) + log(1 + y) + log10(1 + t) + log2(2 + x)",
		"sinh(x) + cosh(y) + tanh(z) + tan(x) + asin(y/4) + acos(x/4) + atan(t)",
		"2 * 3 + 7 % 4 - 10 / 4",
		"x + 0 * t",
		"let a = x * 2; let b = a + y; a * b - t",
	}
	for _, src := range corpus {
		ev := mustCompile(t, src).NewEvaluator()
		ref := newReference(t, src)
		for _, p := range points {
			got, want := ev.Eval(p[0], p[1], p[2], p[3]), ref.eval(t, p[0], p[1], p[2], p[3])
			if math.Float64bits(got) != math.Float64bits(want) && !(math.IsNaN(got) && math.IsNaN(want)) {
				t.Errorf("%s at %v = %v (%016x), expr-lang's VM %v (%016x)", src, p, got, math.Float64bits(got), want, math.Float64bits(want))
			}
		}
	}
}

func TestTernaryAndPowers(t *testing.T) {
	src := "t < 0.1 ? 0 : 1e3"
	ev := mustCompile(t, src).NewEvaluator()
	for _, c := range []struct{ t, want float64 }{{0, 0}, {0.099, 0}, {0.1, 1e3}, {5, 1e3}} {
		if got := ev.Eval(0.5, 0.5, 0, c.t); got != c.want {
			t.Errorf("%s at t = %g: %g, want %g", src, c.t, got, c.want)
		}
	}
	for _, src := range []string{"x^y", "x**y", "pow(x, y)"} {
		ev := mustCompile(t, src).NewEvaluator()
		for _, p := range [][2]float64{{2, 10}, {9, 0.5}, {1.5, -2}, {-2, 3}, {-2, 0.5}} {
			if got, want := ev.Eval(p[0], p[1], 0, 0), math.Pow(p[0], p[1]); !near(got, want) {
				t.Errorf("%s at x = %g, y = %g: %g, want %g", src, p[0], p[1], got, want)
			}
		}
	}
	// ^ binds tighter than unary minus on its right and is right-associative.
	if got := mustCompile(t, "2^3^2").NewEvaluator().Eval(0, 0, 0, 0); got != 512 && got != 64 {
		t.Errorf("2^3^2 = %g", got)
	}
}

func TestEveryFunction(t *testing.T) {
	one := map[string]func(float64) float64{
		"sin": math.Sin, "cos": math.Cos, "tan": math.Tan, "asin": math.Asin, "acos": math.Acos, "atan": math.Atan,
		"sinh": math.Sinh, "cosh": math.Cosh, "tanh": math.Tanh, "exp": math.Exp, "log": math.Log,
		"log10": math.Log10, "log2": math.Log2, "sqrt": math.Sqrt, "abs": math.Abs,
		"floor": math.Floor, "ceil": math.Ceil, "round": math.Round,
	}
	two := map[string]func(a, b float64) float64{
		"atan2": math.Atan2, "pow": math.Pow, "hypot": math.Hypot, "min": math.Min, "max": math.Max,
	}
	for _, name := range Functions() {
		f1, f2 := one[name], two[name]
		if f1 == nil && f2 == nil {
			t.Errorf("function %s has no test", name)
			continue
		}
		for _, x := range []float64{-0.75, 0.25, 0.5, 2.5} {
			var src string
			var want float64
			if f1 != nil {
				src, want = name+"(x)", f1(x)
			} else {
				src, want = name+"(x, 0.375)", f2(x, 0.375)
			}
			got := mustCompile(t, src).NewEvaluator().Eval(x, 0, 0, 0)
			if math.Float64bits(got) != math.Float64bits(want) && !(math.IsNaN(got) && math.IsNaN(want)) {
				t.Errorf("%s at x = %g: %v, want %v", src, x, got, want)
			}
		}
	}
	if got := mustCompile(t, "min(3, x, 2, y) + max(x)").NewEvaluator().Eval(5, 1, 0, 0); got != 1+5 {
		t.Errorf("min(3, x, 2, y) + max(x) at x = 5, y = 1: %g, want 6", got)
	}
	pi, e := math.Pi, math.E // run-time sums: Go's constant arithmetic is exact
	if got := mustCompile(t, "pi + e").NewEvaluator().Eval(0, 0, 0, 0); got != pi+e {
		t.Errorf("pi + e = %v", got)
	}
}

// compileError compiles src, which must fail, and returns its *Error.
func compileError(t *testing.T, src string) *Error {
	t.Helper()
	_, err := Compile("source.expr", src)
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("Compile(%q) = %v, want an *Error", src, err)
	}
	return e
}

func TestParseErrorPosition(t *testing.T) {
	e := compileError(t, "x +* 2")
	if e.Line != 1 || e.Column != 4 {
		t.Errorf("x +* 2: line %d column %d, want 1 and 4 (the *)", e.Line, e.Column)
	}
	if got := e.Error(); !strings.HasPrefix(got, "source.expr: column 4: unexpected token") {
		t.Errorf("message %q", got)
	}
	e = compileError(t, "sin(x) + (y")
	if e.Column != 11 || !strings.Contains(e.Error(), "column 11: unexpected token EOF") {
		t.Errorf("sin(x) + (y: %q, column %d", e.Error(), e.Column)
	}
	// A source of several lines (a TOML multi-line string) names the line.
	e = compileError(t, "x +\n  y +* 2")
	if e.Line != 2 || e.Column != 6 || !strings.Contains(e.Error(), "line 2, column 6") {
		t.Errorf("two lines: %q (line %d column %d)", e.Error(), e.Line, e.Column)
	}
}

func TestUnknownNames(t *testing.T) {
	e := compileError(t, "t < 0.1 ? 0 : tt")
	if got, want := e.Error(), "source.expr: column 15: unknown name tt (did you mean t?)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	e = compileError(t, "foo(x) + 1")
	if !strings.Contains(e.Error(), "unknown name foo") || !strings.Contains(e.Error(), "sin, cos") || e.Column != 1 {
		t.Errorf("unknown function: %q", e.Error())
	}
	e = compileError(t, "sine(x)")
	if !strings.Contains(e.Error(), "did you mean sin?") {
		t.Errorf("sine: %q", e.Error())
	}
	// expr-lang's builtins are not heat's.
	for _, src := range []string{"len(x)", "int(x)", "now()"} {
		if e := compileError(t, src); !strings.Contains(e.Msg, "unknown name") {
			t.Errorf("%s: %q", src, e.Error())
		}
	}
}

func TestNotANumber(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{`"hot"`, "gives text, not a number"},
		{"x < 1", "gives true or false, not a number"},
		{"t < 1 ? true : 2", "one branch of ?: is a number and the other true or false"},
		{"[1, 2]", "gives a list, not a number"},
		{"sin", "gives a function"},
		{"x ? 1 : 2", "condition"},
		{"x && y ? 1 : 2", "&&"},
		{"5 % 0", "by zero"},
		{"", "is empty"},
	} {
		e := compileError(t, c.src)
		if !strings.Contains(e.Error(), c.want) || !strings.HasPrefix(e.Error(), "source.expr: ") {
			t.Errorf("%s: %q, want it to say %q", c.src, e.Error(), c.want)
		}
	}
}

func TestUses(t *testing.T) {
	for _, c := range []struct {
		src  string
		uses string // the variables read
	}{
		{"1e3", ""}, {"2*pi*e", ""}, {"x", "x"}, {"t < 0.1 ? 0 : 1e3", "t"},
		{"exp(-t)*sin(pi*x)*sin(pi*y)", "xyt"}, {"z + 0*x", "xz"},
		{"let a = y; a", "y"},
	} {
		e := mustCompile(t, c.src)
		got := ""
		for _, v := range Variables {
			if e.Uses(v) {
				got += v
			}
		}
		if got != c.uses {
			t.Errorf("%s uses %q, want %q", c.src, got, c.uses)
		}
		if e.String() != c.src {
			t.Errorf("String() = %q, want %q", e.String(), c.src)
		}
	}
}

func TestConstantFolding(t *testing.T) {
	e := mustCompile(t, "2*pi*(1 + 1e-3)^2 - sqrt(16)")
	pi, a := math.Pi, 1+1e-3 // run-time products: Go's constant arithmetic is exact
	want := 2*pi*(a*a) - 4
	v, ok := e.Constant()
	if !ok || !near(v, want) {
		t.Errorf("Constant() = %v, %v; want %v, true", v, ok, want)
	}
	if got := e.NewEvaluator().Eval(1, 2, 3, 4); got != v {
		t.Errorf("Eval = %v, want the constant %v", got, v)
	}
	if _, ok := mustCompile(t, "x + 1").Constant(); ok {
		t.Error("x + 1 is not constant")
	}
	// NaN and Inf come back as they are, for the caller to report.
	if v := mustCompile(t, "sqrt(x)").NewEvaluator().Eval(-1, 0, 0, 0); !math.IsNaN(v) {
		t.Errorf("sqrt(-1) = %v, want NaN", v)
	}
	if v := mustCompile(t, "1/x").NewEvaluator().Eval(0, 0, 0, 0); !math.IsInf(v, 1) {
		t.Errorf("1/0 = %v, want +Inf", v)
	}
}

func TestAtTime(t *testing.T) {
	for _, src := range []string{
		"t < 0.1 ? 0 : 1e3*exp(-((x-0.5)^2+(y-0.5)^2)/0.01)",
		"exp(-t)*sin(pi*x)*sin(pi*y)*(2*pi^2 - 1)",
		"293 + 5*sin(2*pi*t/86400)",
		"x + y",
	} {
		e := mustCompile(t, src)
		ev := e.NewEvaluator()
		for _, tm := range []float64{0, 0.05, 0.1, 0.7, 43200} {
			at := e.AtTime(tm)
			if at.Uses("t") {
				t.Errorf("%s at t = %g still reads t", src, tm)
			}
			aev := at.NewEvaluator()
			for _, p := range points {
				got, want := aev.Eval(p[0], p[1], p[2], -1), ev.Eval(p[0], p[1], p[2], tm)
				if math.Float64bits(got) != math.Float64bits(want) {
					t.Errorf("%s at t = %g, %v: %v, unspecialised %v", src, tm, p, got, want)
				}
			}
		}
	}
	if _, ok := mustCompile(t, "t < 0.1 ? 0 : 1e3*x").AtTime(0.05).Constant(); !ok {
		t.Error("t < 0.1 ? 0 : … before 0.1 is not folded to 0")
	}
	if _, ok := mustCompile(t, "293 + 5*sin(2*pi*t/86400)").AtTime(3).Constant(); !ok {
		t.Error("a value of t alone is not folded at a time")
	}
}

func TestConcurrentEvaluators(t *testing.T) {
	e := mustCompile(t, "t < 0.5 ? exp(-t)*sin(pi*x)*sin(pi*y) : hypot(x - 0.5, y - 0.5)^2 + z")
	want := make([]float64, 1000)
	ev := e.NewEvaluator()
	at := func(i int) (x, y, z, t float64) {
		return float64(i%31) / 31, float64(i%17) / 17, float64(i%5) / 5, float64(i%7) / 7
	}
	for i := range want {
		want[i] = ev.Eval(at(i))
	}
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for g := range 16 {
		wg.Go(func() {
			ev := e.NewEvaluator()
			for i := range want {
				if got := ev.Eval(at(i)); got != want[i] {
					errs <- fmt.Sprintf("goroutine %d, point %d: %v, want %v", g, i, got, want[i])
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for msg := range errs {
		t.Error(msg)
	}
}

func TestEvalAllocatesNothing(t *testing.T) {
	ev := mustCompile(t, "t < 0.1 ? 0 : 1e3*exp(-((x-0.5)^2+(y-0.5)^2)/0.01) + min(x, y, z)").NewEvaluator()
	x := 0.0
	if n := testing.AllocsPerRun(1000, func() { x += ev.Eval(x, 0.3, 0.1, 0.2) * 1e-9 }); n != 0 {
		t.Errorf("Eval allocates %v times a call", n)
	}
}

// BenchmarkEval is the cost of one evaluation (ns/op) of typical sources;
// expr=vm is expr-lang's own VM on the Gaussian, for scale.
func BenchmarkEval(b *testing.B) {
	for _, c := range []struct{ name, src string }{
		{"gaussian", "t < 0.1 ? 0 : 1e3*exp(-((x-0.5)^2+(y-0.5)^2)/0.01)"},
		{"manufactured", "exp(-t)*sin(pi*x)*sin(pi*y)*(2*pi^2 - 1)"},
		{"daily", "293 + 5*sin(2*pi*t/86400)"},
		{"polynomial", "x*y + 3*x - 2*y + 1"},
		{"constant", "2*pi*1e3"},
	} {
		b.Run("expr="+c.name, func(b *testing.B) {
			e, err := Compile("source.expr", c.src)
			if err != nil {
				b.Fatal(err)
			}
			ev := e.NewEvaluator()
			b.ReportAllocs()
			s := 0.0
			i := 0
			for b.Loop() {
				x := float64(i&1023) / 1024
				s += ev.Eval(x, 1-x, 0, 0.5)
				i++
			}
			sink = s
		})
	}
	b.Run("expr=vm", func(b *testing.B) {
		p, err := exprlang.Compile("t < 0.1 ? 0 : 1e3*exp(-((x-0.5)^2+(y-0.5)^2)/0.01)", options()...)
		if err != nil {
			b.Fatal(err)
		}
		var m vm.VM
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			x := float64(i&1023) / 1024
			out, err := m.Run(p, env{X: x, Y: 1 - x, T: 0.5, Pi: math.Pi, E: math.E})
			if err != nil {
				b.Fatal(err)
			}
			sink += out.(float64)
			i++
		}
	})
}

var sink float64
