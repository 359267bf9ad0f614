package expr

import (
	"fmt"
	"math"
	"strings"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/file"
)

// point is what an expression reads: x, y, z and t, in the order of
// Variables, and the values of its let bindings at them (a slot each,
// written where the binding is evaluated, read where it is named). The
// closures read it from the Evaluator, through a pointer.
type point struct {
	v    [4]float64
	lets []float64
}

// num is a lowered numeric node; cond a lowered true-or-false one.
type (
	num  func(p *point) float64
	cond func(p *point) bool
)

// value is a lowered node: a number or a truth value, constant (folded
// when compiled) or not. A leaf reading one variable has at >= 0; a read
// of a let binding's slot has slot = the slot + 1.
type value struct {
	isBool bool
	konst  bool
	k      float64 // the constant number
	kb     bool    // the constant truth value
	num    num
	cond   cond
	at     int // the variable a bare leaf reads; -1 otherwise
	slot   int // 1 + the let slot a bare read reads; 0 otherwise
}

func constNum(k float64) value { return value{konst: true, k: k, at: -1} }
func constBool(b bool) value   { return value{isBool: true, konst: true, kb: b, at: -1} }

// asNum is v's closure, a constant one when v is folded.
func (v value) asNum() num {
	if v.konst {
		k := v.k
		return func(*point) float64 { return k }
	}
	return v.num
}

// asCond is v's closure, a constant one when v is folded.
func (v value) asCond() cond {
	if v.konst {
		b := v.kb
		return func(*point) bool { return b }
	}
	return v.cond
}

// lowerer turns a checked expr-lang tree into closures.
type lowerer struct {
	src, key string
	uses     map[string]bool  // the variables read
	scope    map[string]value // let bindings in force
	fixT     *float64         // the value of t, when it is a constant (AtTime)
	read     []bool           // per let slot: whether the body names it
}

// fail is the *Error of node n.
func (l *lowerer) fail(n ast.Node, format string, args ...any) *Error {
	fe := (&file.Error{Location: n.Location(), Message: fmt.Sprintf(format, args...)}).Bind(file.NewSource(l.src))
	return &Error{Key: l.key, Line: fe.Line, Column: fe.Column + 1, Msg: fe.Message, multiline: strings.Contains(l.src, "\n")}
}

// lower lowers node n.
func (l *lowerer) lower(n ast.Node) (value, error) {
	switch n := n.(type) {
	case *ast.IntegerNode:
		return constNum(float64(n.Value)), nil
	case *ast.FloatNode:
		return constNum(n.Value), nil
	case *ast.BoolNode:
		return constBool(n.Value), nil
	case *ast.IdentifierNode:
		return l.ident(n)
	case *ast.UnaryNode:
		return l.unary(n)
	case *ast.BinaryNode:
		return l.binary(n)
	case *ast.ConditionalNode:
		return l.conditional(n)
	case *ast.CallNode:
		return l.call(n)
	case *ast.VariableDeclaratorNode:
		return l.let(n)
	}
	return value{}, l.fail(n, "%s is not part of heat's expressions (numbers, x y z t, pi e, + - * / %% ^, comparisons, && || !, ?:, let, and the functions %s)",
		describe(n), strings.Join(Functions(), " "))
}

// let lowers a let binding and its body. A binding that is constant or
// a bare variable is put in place where it is named; any other is
// evaluated once a point into a slot of its own, which its names read.
// Putting every binding in place made the closures evaluate a chain of n
// lets, each naming the one before twice, 2^n times (40 lets in 906 bytes
// never ended).
func (l *lowerer) let(n *ast.VariableDeclaratorNode) (value, error) {
	v, err := l.lower(n.Value)
	if err != nil {
		return value{}, err
	}
	bound, slot := v, -1
	if !v.konst && v.at < 0 {
		slot = len(l.read)
		l.read = append(l.read, false)
		bound = slotRead(slot, v.isBool)
	}
	outer, shadowed := l.scope[n.Name]
	l.scope[n.Name] = bound
	body, err := l.lower(n.Expr)
	if shadowed {
		l.scope[n.Name] = outer
	} else {
		delete(l.scope, n.Name)
	}
	if err != nil || slot < 0 || !l.read[slot] || body.konst {
		return body, err // nothing reads the slot: the binding is not evaluated
	}
	return bind(slot, v, body), nil
}

// slotRead is a read of let slot i, a number or (stored as 1 or 0) a
// truth value.
func slotRead(i int, isBool bool) value {
	if isBool {
		return value{isBool: true, cond: func(p *point) bool { return p.lets[i] != 0 }, at: -1, slot: i + 1}
	}
	return value{num: func(p *point) float64 { return p.lets[i] }, at: -1, slot: i + 1}
}

// bind is body, after v is evaluated into let slot i.
func bind(i int, v, body value) value {
	if !v.isBool && !body.isBool {
		f, g := v.num, body.num
		return value{num: func(p *point) float64 { p.lets[i] = f(p); return g(p) }, at: -1}
	}
	var store func(p *point)
	if v.isBool {
		c := v.cond
		store = func(p *point) {
			p.lets[i] = 0
			if c(p) {
				p.lets[i] = 1
			}
		}
	} else {
		f := v.num
		store = func(p *point) { p.lets[i] = f(p) }
	}
	if body.isBool {
		g := body.cond
		return value{isBool: true, cond: func(p *point) bool { store(p); return g(p) }, at: -1}
	}
	g := body.num
	return value{num: func(p *point) float64 { store(p); return g(p) }, at: -1}
}

// describe names what node n is, for a message.
func describe(n ast.Node) string {
	switch n.(type) {
	case *ast.StringNode:
		return "text"
	case *ast.ArrayNode:
		return "a list"
	case *ast.MapNode:
		return "a map"
	case *ast.NilNode:
		return "nil"
	case *ast.MemberNode, *ast.ChainNode:
		return "a member access"
	case *ast.SequenceNode:
		return "a sequence (;)"
	}
	return fmt.Sprintf("%q", n.String())
}

// ident lowers a variable, a constant or a let binding.
func (l *lowerer) ident(n *ast.IdentifierNode) (value, error) {
	if v, ok := l.scope[n.Value]; ok {
		if v.slot > 0 {
			l.read[v.slot-1] = true
		}
		return v, nil
	}
	if k, ok := Constants[n.Value]; ok {
		return constNum(k), nil
	}
	if n.Value == "t" && l.fixT != nil {
		return constNum(*l.fixT), nil
	}
	for i, name := range Variables {
		if name == n.Value {
			l.uses[name] = true
			return value{num: leaf(i), at: i}, nil
		}
	}
	return value{}, l.fail(n, "unknown name %s%s", n.Value, unknownHint(n.Value))
}

// leaf reads variable i.
func leaf(i int) num {
	switch i {
	case 0:
		return func(p *point) float64 { return p.v[0] }
	case 1:
		return func(p *point) float64 { return p.v[1] }
	case 2:
		return func(p *point) float64 { return p.v[2] }
	}
	return func(p *point) float64 { return p.v[3] }
}

func (l *lowerer) unary(n *ast.UnaryNode) (value, error) {
	v, err := l.lower(n.Node)
	if err != nil {
		return value{}, err
	}
	switch n.Operator {
	case "-", "+":
		if v.isBool {
			return value{}, l.fail(n, "%s of true or false; it takes a number", n.Operator)
		}
		if n.Operator == "+" {
			return v, nil
		}
		if v.konst {
			return constNum(-v.k), nil
		}
		f := v.num
		return value{num: func(p *point) float64 { return -f(p) }, at: -1}, nil
	case "!", "not":
		if !v.isBool {
			return value{}, l.fail(n, "%s of a number; it takes true or false (a comparison)", n.Operator)
		}
		if v.konst {
			return constBool(!v.kb), nil
		}
		c := v.cond
		return value{isBool: true, cond: func(p *point) bool { return !c(p) }, at: -1}, nil
	}
	return value{}, l.fail(n, "operator %s is not part of heat's expressions", n.Operator)
}

func (l *lowerer) conditional(n *ast.ConditionalNode) (value, error) {
	c, err := l.lower(n.Cond)
	if err != nil {
		return value{}, err
	}
	if !c.isBool {
		return value{}, l.fail(n.Cond, "the condition of ?: is a number; it takes true or false (a comparison)")
	}
	a, err := l.lower(n.Exp1)
	if err != nil {
		return value{}, err
	}
	b, err := l.lower(n.Exp2)
	if err != nil {
		return value{}, err
	}
	if a.isBool != b.isBool {
		return value{}, l.fail(n, "one branch of ?: is a number and the other true or false")
	}
	if c.konst {
		if c.kb {
			return a, nil
		}
		return b, nil
	}
	test := c.cond
	if a.isBool {
		fa, fb := a.asCond(), b.asCond()
		return value{isBool: true, cond: func(p *point) bool {
			if test(p) {
				return fa(p)
			}
			return fb(p)
		}, at: -1}, nil
	}
	fa, fb := a.asNum(), b.asNum()
	return value{num: func(p *point) float64 {
		if test(p) {
			return fa(p)
		}
		return fb(p)
	}, at: -1}, nil
}

func (l *lowerer) call(n *ast.CallNode) (value, error) {
	id, ok := n.Callee.(*ast.IdentifierNode)
	var f function
	if ok {
		f, ok = lookup(id.Value)
	}
	if !ok {
		return value{}, l.fail(n, "%s is not a function of heat's expressions (%s)", n.Callee.String(), strings.Join(Functions(), ", "))
	}
	args := make([]value, len(n.Arguments))
	for i, a := range n.Arguments {
		v, err := l.lower(a)
		if err != nil {
			return value{}, err
		}
		if v.isBool {
			return value{}, l.fail(a, "argument %d of %s is true or false; it takes a number", i+1, f.name)
		}
		args[i] = v
	}
	want := 1
	if f.f2 != nil {
		want = 2
	}
	switch {
	case f.variadic && len(args) == 0:
		return value{}, l.fail(n, "%s needs at least one argument", f.name)
	case !f.variadic && len(args) != want:
		return value{}, l.fail(n, "%s takes %d argument(s), not %d", f.name, want, len(args))
	}
	if f.variadic {
		v := args[0]
		for _, a := range args[1:] {
			v = apply2(f.f2, v, a)
		}
		return v, nil
	}
	if f.f2 != nil {
		return apply2(f.f2, args[0], args[1]), nil
	}
	a := args[0]
	g := f.f1
	if a.konst {
		return constNum(g(a.k)), nil
	}
	if a.at >= 0 {
		i := a.at
		return value{num: func(p *point) float64 { return g(p.v[i&3]) }, at: -1}, nil
	}
	h := a.num
	return value{num: func(p *point) float64 { return g(h(p)) }, at: -1}, nil
}

// apply2 is g(a, b), folded when both are constant.
func apply2(g func(a, b float64) float64, a, b value) value {
	if a.konst && b.konst {
		return constNum(g(a.k, b.k))
	}
	fa, fb := a.asNum(), b.asNum()
	return value{num: func(p *point) float64 { return g(fa(p), fb(p)) }, at: -1}
}

func (l *lowerer) binary(n *ast.BinaryNode) (value, error) {
	a, err := l.lower(n.Left)
	if err != nil {
		return value{}, err
	}
	b, err := l.lower(n.Right)
	if err != nil {
		return value{}, err
	}
	op := n.Operator
	switch op {
	case "&&", "and", "||", "or":
		if !a.isBool || !b.isBool {
			return value{}, l.fail(n, "%s joins true-or-false values (comparisons), not numbers", op)
		}
		return logic(op == "&&" || op == "and", a, b), nil
	case "==", "!=":
		if a.isBool != b.isBool {
			return value{}, l.fail(n, "%s compares a number with true or false", op)
		}
		if a.isBool {
			return boolEqual(op == "==", a, b), nil
		}
		return compare(op, a, b), nil
	case "<", ">", "<=", ">=":
		if a.isBool || b.isBool {
			return value{}, l.fail(n, "%s compares numbers, not true or false", op)
		}
		return compare(op, a, b), nil
	case "+", "-", "*", "/", "^", "**", "%":
		if a.isBool || b.isBool {
			return value{}, l.fail(n, "%s takes numbers, not true or false", op)
		}
		if op == "%" {
			if b.konst && b.k == 0 {
				return value{}, l.fail(n, "%% by zero")
			}
		}
		return arith(op, a, b), nil
	}
	return value{}, l.fail(n, "operator %s is not part of heat's expressions", op)
}

// logic is a && b (and) or a || b, short-circuit, folded where a side is
// constant.
func logic(and bool, a, b value) value {
	switch {
	case a.konst && a.kb != and: // false && …, true || …
		return constBool(a.kb)
	case a.konst:
		return b
	case b.konst && b.kb == and: // … && true, … || false
		return a
	case b.konst:
		// … && false, … || true: a has no effect on the outcome (it
		// has none on anything else either: expressions are pure).
		return constBool(b.kb)
	}
	fa, fb := a.cond, b.cond
	if and {
		return value{isBool: true, cond: func(p *point) bool { return fa(p) && fb(p) }, at: -1}
	}
	return value{isBool: true, cond: func(p *point) bool { return fa(p) || fb(p) }, at: -1}
}

// boolEqual compares two truth values.
func boolEqual(eq bool, a, b value) value {
	if a.konst && b.konst {
		return constBool((a.kb == b.kb) == eq)
	}
	fa, fb := a.asCond(), b.asCond()
	return value{isBool: true, cond: func(p *point) bool { return (fa(p) == fb(p)) == eq }, at: -1}
}

// comparison is one numeric comparison.
func comparison(op string) func(a, b float64) bool {
	switch op {
	case "<":
		return func(a, b float64) bool { return a < b }
	case ">":
		return func(a, b float64) bool { return a > b }
	case "<=":
		return func(a, b float64) bool { return a <= b }
	case ">=":
		return func(a, b float64) bool { return a >= b }
	case "==":
		return func(a, b float64) bool { return a == b }
	}
	return func(a, b float64) bool { return a != b }
}

// compare lowers a numeric comparison; a constant right side (t < 0.1) is
// the common case and gets a closure of its own.
func compare(op string, a, b value) value {
	if a.konst && b.konst {
		return constBool(comparison(op)(a.k, b.k))
	}
	if b.konst {
		k, f := b.k, a.num
		if a.at >= 0 {
			i := a.at & 3
			switch op {
			case "<":
				return value{isBool: true, cond: func(p *point) bool { return p.v[i] < k }, at: -1}
			case ">":
				return value{isBool: true, cond: func(p *point) bool { return p.v[i] > k }, at: -1}
			case "<=":
				return value{isBool: true, cond: func(p *point) bool { return p.v[i] <= k }, at: -1}
			case ">=":
				return value{isBool: true, cond: func(p *point) bool { return p.v[i] >= k }, at: -1}
			}
		}
		cmp := comparison(op)
		return value{isBool: true, cond: func(p *point) bool { return cmp(f(p), k) }, at: -1}
	}
	cmp := comparison(op)
	fa, fb := a.asNum(), b.asNum()
	return value{isBool: true, cond: func(p *point) bool { return cmp(fa(p), fb(p)) }, at: -1}
}

// arithmetic is one arithmetic operator on two numbers. Powers are
// math.Pow; % is math.Mod, which is Go's integer % on the integer
// constants the checker lets % take.
func arithmetic(op string) func(a, b float64) float64 {
	switch op {
	case "+":
		return func(a, b float64) float64 { return a + b }
	case "-":
		return func(a, b float64) float64 { return a - b }
	case "*":
		return func(a, b float64) float64 { return a * b }
	case "/":
		return func(a, b float64) float64 { return a / b }
	case "%":
		return math.Mod
	}
	return math.Pow // ^ and **
}

// arith lowers an arithmetic operator, folded when both sides are
// constant. The shapes sources are made of get closures of their own: a
// variable and a constant (x - 0.5), a node and a constant (… * 1e3), and a
// square (… ^ 2, which is math.Pow's own product, bit for bit, as long as
// it is not subnormal).
func arith(op string, a, b value) value {
	g := arithmetic(op)
	if a.konst && b.konst {
		return constNum(g(a.k, b.k))
	}
	if (op == "^" || op == "**") && b.konst && b.k == 2 {
		f := a.num
		if a.at >= 0 {
			i := a.at & 3
			return value{num: func(p *point) float64 { v := p.v[i]; return v * v }, at: -1}
		}
		return value{num: func(p *point) float64 { v := f(p); return v * v }, at: -1}
	}
	if b.konst && a.at >= 0 {
		if f := varConst(op, a.at&3, b.k); f != nil {
			return value{num: f, at: -1}
		}
	}
	if b.konst {
		if f := nodeConst(op, a.num, b.k); f != nil {
			return value{num: f, at: -1}
		}
	}
	if a.konst {
		if f := constNode(op, a.k, b.num); f != nil {
			return value{num: f, at: -1}
		}
	}
	if f := nodeNode(op, a.asNum(), b.asNum()); f != nil {
		return value{num: f, at: -1}
	}
	fa, fb := a.asNum(), b.asNum()
	return value{num: func(p *point) float64 { return g(fa(p), fb(p)) }, at: -1}
}

// varConst is variable i op k for the four basic operators, else nil.
func varConst(op string, i int, k float64) num {
	switch op {
	case "+":
		return func(p *point) float64 { return p.v[i] + k }
	case "-":
		return func(p *point) float64 { return p.v[i] - k }
	case "*":
		return func(p *point) float64 { return p.v[i] * k }
	case "/":
		return func(p *point) float64 { return p.v[i] / k }
	}
	return nil
}

// nodeConst is f op k for the four basic operators, else nil.
func nodeConst(op string, f num, k float64) num {
	switch op {
	case "+":
		return func(p *point) float64 { return f(p) + k }
	case "-":
		return func(p *point) float64 { return f(p) - k }
	case "*":
		return func(p *point) float64 { return f(p) * k }
	case "/":
		return func(p *point) float64 { return f(p) / k }
	}
	return nil
}

// constNode is k op f for the four basic operators, else nil.
func constNode(op string, k float64, f num) num {
	switch op {
	case "+":
		return func(p *point) float64 { return k + f(p) }
	case "-":
		return func(p *point) float64 { return k - f(p) }
	case "*":
		return func(p *point) float64 { return k * f(p) }
	case "/":
		return func(p *point) float64 { return k / f(p) }
	}
	return nil
}

// nodeNode is f op g for the four basic operators, else nil.
func nodeNode(op string, f, g num) num {
	switch op {
	case "+":
		return func(p *point) float64 { return f(p) + g(p) }
	case "-":
		return func(p *point) float64 { return f(p) - g(p) }
	case "*":
		return func(p *point) float64 { return f(p) * g(p) }
	case "/":
		return func(p *point) float64 { return f(p) / g(p) }
	}
	return nil
}
