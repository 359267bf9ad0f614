// Package expr reads the formulas and time tables a config gives for values
// that vary in space and time: a source, an initial field, a face's value.
//
// An expression is parsed and type-checked by github.com/expr-lang/expr
// (its syntax, its messages and their positions), then lowered once into a
// tree of float64 closures: Eval allocates nothing and boxes no value, which
// expr-lang's own VM does for every intermediate result (13 allocations and
// some 580 ns for a Gaussian source, measured). Parts that read no variable
// are folded to constants when compiled, a whole constant expression to one
// number.
//
// The variables are x, y, z (the physical coordinates of a cell or face
// centre; in 2D z is 0, and the grid's C-order shape [ny, nx] puts x on the
// last axis) and t (time); the constants pi and e; the functions are listed
// in Functions. Arithmetic, comparisons, && || !, ?: and let bindings are
// expr-lang's; ^ and ** are powers, / always divides as floats, % takes
// integer constants.
package expr

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	exprlang "github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/checker"
	"github.com/expr-lang/expr/conf"
	"github.com/expr-lang/expr/file"

	"heat/internal/textdist"
)

// Variables are the names an expression reads per point and time, in the
// order Eval takes them.
var Variables = []string{"x", "y", "z", "t"}

// Constants are the named constants.
var Constants = map[string]float64{"pi": math.Pi, "e": math.E}

// env is the typed environment the checker sees: every name a float64.
type env struct {
	X  float64 `expr:"x"`
	Y  float64 `expr:"y"`
	Z  float64 `expr:"z"`
	T  float64 `expr:"t"`
	Pi float64 `expr:"pi"`
	E  float64 `expr:"e"`
}

// function is one function an expression may call: one or two float64
// arguments, or (min, max) one or more.
type function struct {
	name     string
	f1       func(float64) float64
	f2       func(a, b float64) float64
	variadic bool // f2 folded over one or more arguments
}

// functions is the function table, in the order messages list it.
var functions = []function{
	{name: "sin", f1: math.Sin}, {name: "cos", f1: math.Cos}, {name: "tan", f1: math.Tan},
	{name: "asin", f1: math.Asin}, {name: "acos", f1: math.Acos}, {name: "atan", f1: math.Atan},
	{name: "atan2", f2: math.Atan2},
	{name: "sinh", f1: math.Sinh}, {name: "cosh", f1: math.Cosh}, {name: "tanh", f1: math.Tanh},
	{name: "exp", f1: math.Exp}, {name: "log", f1: math.Log}, {name: "log10", f1: math.Log10}, {name: "log2", f1: math.Log2},
	{name: "sqrt", f1: math.Sqrt}, {name: "abs", f1: math.Abs},
	{name: "floor", f1: math.Floor}, {name: "ceil", f1: math.Ceil}, {name: "round", f1: math.Round},
	{name: "min", f2: math.Min, variadic: true}, {name: "max", f2: math.Max, variadic: true},
	{name: "pow", f2: math.Pow}, {name: "hypot", f2: math.Hypot},
}

// Functions are the names of the functions an expression may call.
func Functions() []string {
	names := make([]string, len(functions))
	for i, f := range functions {
		names[i] = f.name
	}
	return names
}

// lookup is the function called name.
func lookup(name string) (function, bool) {
	i := slices.IndexFunc(functions, func(f function) bool { return f.name == name })
	if i < 0 {
		return function{}, false
	}
	return functions[i], true
}

// options are the expr-lang options of heat's expressions: the typed
// environment, a float64 result, no builtins but the function table. The
// functions' Go bodies serve expr-lang's VM (the tests' reference); Eval
// calls the table's.
func options() []exprlang.Option {
	opts := []exprlang.Option{exprlang.Env(env{}), exprlang.AsFloat64(), exprlang.DisableAllBuiltins()}
	for _, f := range functions {
		var typ any
		var body func(args ...any) (any, error)
		switch {
		case f.variadic:
			typ = new(func(float64, ...float64) float64)
			body = func(args ...any) (any, error) {
				v := args[0].(float64)
				for _, a := range args[1:] {
					v = f.f2(v, a.(float64))
				}
				return v, nil
			}
		case f.f2 != nil:
			typ = new(func(float64, float64) float64)
			body = func(args ...any) (any, error) { return f.f2(args[0].(float64), args[1].(float64)), nil }
		default:
			typ = new(func(float64) float64)
			body = func(args ...any) (any, error) { return f.f1(args[0].(float64)), nil }
		}
		opts = append(opts, exprlang.Function(f.name, body, typ))
	}
	return opts
}

// config is expr-lang's configuration of options, as expr.Compile builds it.
func config() *conf.Config {
	c := conf.CreateNew()
	for _, o := range options() {
		o(c)
	}
	for name := range c.Disabled {
		delete(c.Builtins, name)
	}
	c.Check()
	return c
}

// Expr is a compiled expression. It is never changed once compiled: any
// number of goroutines may evaluate it, each through an Evaluator of its
// own.
type Expr struct {
	key, src string
	tree     ast.Node // the checked tree, read only (AtTime lowers it again)
	root     num      // nil: constant
	value    float64  // the value when root is nil
	uses     map[string]bool
	lets     int // let slots an Evaluator holds
}

// Error is a mistake in an expression: the config key it was given for,
// where (Line and Column count from 1; 0 when the mistake is the whole
// expression's, such as a result that is not a number) and what.
type Error struct {
	Key          string
	Line, Column int
	Msg          string
	multiline    bool // the source has more than one line: Detail names the line
}

// Error is "source.expr: column 7: unknown name tt".
func (e *Error) Error() string {
	if e.Key == "" {
		return e.Detail()
	}
	return e.Key + ": " + e.Detail()
}

// Detail is the message without the key, "column 7: unknown name tt", as a
// config error puts it after the key it names itself.
func (e *Error) Detail() string {
	switch {
	case e.Column > 0 && e.multiline:
		return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Msg)
	case e.Column > 0:
		return fmt.Sprintf("column %d: %s", e.Column, e.Msg)
	}
	return e.Msg
}

// Compile parses and type-checks src, the value of config key key, and
// lowers it for Eval. Errors are *Error: a syntax error, an unknown name
// (with the nearest known one), a result that is not a number, a text
// longer than MaxLength or nested deeper than MaxDepth.
func Compile(key, src string) (*Expr, error) {
	if strings.TrimSpace(src) == "" {
		return nil, &Error{Key: key, Msg: "is empty; give a formula of x, y, z and t, such as \"1e3*exp(-((x-0.5)^2 + (y-0.5)^2)/0.01)\""}
	}
	if err := bounds(key, src); err != nil {
		return nil, err
	}
	tree, err := checker.ParseCheck(src, config())
	if err != nil {
		return nil, checkError(key, src, err)
	}
	return build(key, src, tree.Node, nil)
}

// build lowers the checked tree of src; fixT, when set, is the value of t.
func build(key, src string, tree ast.Node, fixT *float64) (*Expr, error) {
	l := &lowerer{src: src, key: key, uses: map[string]bool{}, scope: map[string]value{}, fixT: fixT}
	v, err := l.lower(tree)
	if err != nil {
		return nil, err
	}
	if v.isBool {
		return nil, &Error{Key: key, Msg: "gives true or false, not a number; a number per case is c ? a : b", multiline: strings.Contains(src, "\n")}
	}
	e := &Expr{key: key, src: src, tree: tree, uses: l.uses, lets: len(l.read)}
	if v.konst {
		e.value = v.k
	} else {
		e.root = v.num
	}
	return e, nil
}

// AtTime is e at the time t: t is a constant in it, and what depends on
// t alone folds, so that evaluating it over a field costs only its parts
// that vary in space (t < 0.1 ? 0 : … is either 0 or …). Its values are
// e's at t, bit for bit; it reads no t (Uses("t") is false).
func (e *Expr) AtTime(t float64) *Expr {
	if !e.uses["t"] {
		return e
	}
	at, err := build(e.key, e.src, e.tree, &t)
	if err != nil {
		return e // e lowered once already: its tree cannot fail again
	}
	return at
}

// checkError turns an error of expr-lang's parser or checker into an
// *Error with a 1-based position and heat's words.
func checkError(key, src string, err error) *Error {
	e := &Error{Key: key, Msg: err.Error(), multiline: strings.Contains(src, "\n")}
	var fe *file.Error
	if errors.As(err, &fe) {
		e.Msg = fe.Message
		if fe.Snippet != "" || fe.Line > 0 {
			e.Line, e.Column = fe.Line, fe.Column+1
		}
	}
	if name, ok := strings.CutPrefix(e.Msg, "unknown name "); ok {
		e.Msg += unknownHint(name)
	}
	if strings.Contains(e.Msg, "exceeds maximum allowed nodes") {
		e.Msg = fmt.Sprintf("has more than %d numbers, names and operators, the most an expression may have (expr-lang's bound)", conf.DefaultMaxNodes)
	}
	if got, ok := strings.CutPrefix(e.Msg, "expected float64, but got "); ok {
		e.Msg = "gives " + typeWords(got) + ", not a number"
	}
	return e
}

// typeWords names a Go type of a result as a user would.
func typeWords(t string) string {
	switch {
	case t == "bool":
		return "true or false"
	case t == "string":
		return "text"
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case strings.HasPrefix(t, "map["):
		return "a map"
	case strings.HasPrefix(t, "func("):
		return "a function (call it: sin(x))"
	}
	return "a value of type " + t
}

// unknownHint suggests the known name nearest to name, else lists them.
func unknownHint(name string) string {
	known := slices.Concat(Variables, []string{"pi", "e"}, Functions())
	best, bestD := "", 3
	for _, k := range known {
		if d := textdist.Edits(name, k); d < bestD {
			best, bestD = k, d
		}
	}
	if best != "" && bestD <= max(1, len(name)/3) {
		return fmt.Sprintf(" (did you mean %s?)", best)
	}
	return fmt.Sprintf(": the variables are x, y, z, t, the constants pi, e, the functions %s", strings.Join(Functions(), ", "))
}

// Uses reports whether the expression reads variable name: "t" says it
// depends on time, "x", "y", "z" on the point.
func (e *Expr) Uses(name string) bool { return e.uses[name] }

// String is the expression's source text.
func (e *Expr) String() string { return e.src }

// Key is the config key the expression was given for.
func (e *Expr) Key() string { return e.key }

// Constant reports whether the expression reads no variable, and then its
// value.
func (e *Expr) Constant() (float64, bool) { return e.value, e.root == nil }

// Evaluator evaluates one Expr. It holds the point being evaluated (the
// closures read it through a pointer, half the cost of passing it by
// value) and its let bindings' values, so it serves one goroutine at a
// time; it costs one small allocation to make, two where e has lets.
type Evaluator struct {
	root  num
	value float64
	p     point
}

// NewEvaluator is an Evaluator of e.
func (e *Expr) NewEvaluator() *Evaluator {
	v := &Evaluator{root: e.root, value: e.value}
	if e.lets > 0 {
		v.p.lets = make([]float64, e.lets)
	}
	return v
}

// Eval is the expression's value at the point (x, y, z) and time t. NaN
// and ±Inf are returned as they come: the caller knows the key, the point
// and the step to name.
func (v *Evaluator) Eval(x, y, z, t float64) float64 {
	if v.root == nil {
		return v.value
	}
	v.p.v = [4]float64{x, y, z, t}
	return v.root(&v.p)
}
