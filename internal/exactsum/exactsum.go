// Package exactsum sums float64 values exactly, so that a global sum (such as
// the mean of a field) has the same bits however the values are split across
// ranks and threads and in whatever order they are added.
//
// An Acc is a fixed-point superaccumulator: an array of int64 limbs, limb i
// standing for 32 bits of weight 2^(32i-1075), wide enough to hold every
// finite float64 and the carries of any realistic number of them. Adding a
// value adds at most three pieces of under 2^32 into three limbs, without
// propagating carries; carries are propagated only every 2^30 additions and
// when the sum is read, merged or encoded. The exact sum is rounded once, to
// nearest with ties to even, when it is read with Float64.
package exactsum

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"

	"heat/comm"
)

const (
	// nLimbs limbs: limb i has weight 2^(32i-1075). A finite float64 has
	// bits of weight 2^-1074 to 2^1023, which Add puts in limbs 0 to 65;
	// limbs 66 and 67 (the signed top, weight 2^1069) only take carries.
	nLimbs = 68
	// limbExp is the base-2 exponent of the least significant bit of limb
	// 0. Choosing -1075 makes a value's bit position its biased exponent.
	limbExp = -1075
	// top is the most significant limb: the only one that stays signed
	// once carries are propagated.
	top = nLimbs - 1
	// mask32 selects the 32 bits a limb holds when normalised.
	mask32 = 1<<32 - 1
	// normEvery is how many Adds may go without propagating carries. Each
	// Add changes a limb by less than 2^32, so a limb stays below about
	// 2^62 in magnitude, which leaves room to merge two accumulators.
	normEvery = 1 << 30
)

// Flags for the non-finite values an Acc has seen.
const (
	flagNaN    = 1 << iota // a NaN was added
	flagPosInf             // +Inf was added
	flagNegInf             // -Inf was added
	flagsAll   = flagNaN | flagPosInf | flagNegInf
)

// Acc is an exact accumulator of float64 values. The zero value is an empty
// accumulator, ready to use. An Acc must not be modified concurrently;
// Float64 and MarshalBinary only read it.
type Acc struct {
	limbs [nLimbs]int64 // value = Σ limbs[i]·2^(32i+limbExp)
	n     uint32        // Adds since carries were last propagated
	flags uint8         // flagNaN, flagPosInf, flagNegInf
}

// Add adds x to the sum exactly. NaN and ±Inf are remembered: Float64 then
// returns NaN if a NaN or both infinities were added, or else the infinity.
func (a *Acc) Add(x float64) {
	b := math.Float64bits(x)
	e := uint(b>>52) & 0x7ff
	if e == 0x7ff {
		a.addNonFinite(b)
		return
	}
	// x = ±m·2^(e-1075) with an integer m < 2^53; subnormals (and zeros)
	// have e = 0 but the scale of e = 1 and no implicit bit. normal is 1
	// for e >= 1, else 0, without a branch that mixed data mispredicts.
	normal := (e + 0x7ff) >> 11
	m := b&(1<<52-1) | uint64(normal)<<52
	e += 1 - normal
	// neg is 0 for x >= 0 and -1 otherwise: (v^neg)-neg is then ±v.
	a.addMag(m, e, -int64(b>>63))
	a.count()
}

// addMag adds ±m·2^(e-1075) (the sign neg: 0 for +, -1 for −), for an
// m < 2^63: m's least significant bit goes to bit e of the limb array, bit
// s of limb e/32; m<<s has at most 94 bits, split into 32+32+30, each
// piece below 2^32 as normEvery assumes. The caller counts it.
func (a *Acc) addMag(m uint64, e uint, neg int64) {
	s := e & 31
	lo := m << s
	hi := m >> (64 - s) // 0 when s == 0
	l := (*[3]int64)(a.limbs[e>>5:])
	l[0] += (int64(lo&mask32) ^ neg) - neg
	l[1] += (int64(lo>>32) ^ neg) - neg
	l[2] += (int64(hi) ^ neg) - neg
}

// count counts one addMag, propagating the carries every normEvery.
func (a *Acc) count() {
	a.n++
	if a.n >= normEvery {
		a.normalize()
	}
}

// addInt adds v·2^(e-1075) for a bin's sum v (|v| < 2^63) and scale e.
func (a *Acc) addInt(v int64, e uint) {
	neg := v >> 63
	a.addMag(uint64((v^neg)-neg), e, neg)
	a.count()
}

// addNonFinite records the NaN or infinity with bits b, out of line to keep
// Add's common path short.
func (a *Acc) addNonFinite(b uint64) {
	switch {
	case b&(1<<52-1) != 0:
		a.flags |= flagNaN
	case b>>63 != 0:
		a.flags |= flagNegInf
	default:
		a.flags |= flagPosInf
	}
}

// AddSlice adds every value of xs exactly.
func (a *Acc) AddSlice(xs []float64) {
	for _, x := range xs {
		a.Add(x)
	}
}

// Merge adds the sum of b to a exactly (a and b may be the same Acc). b is
// not modified.
func (a *Acc) Merge(b *Acc) {
	bl := b.limbs // a copy, in case b == a
	a.flags |= b.flags
	// A limb of b is below 2^30·2^32 in magnitude. Once a is normalised
	// its limbs lie in [0, 2^32), so the sums cannot overflow; propagating
	// them again restores the bound for a's next Adds.
	a.normalize()
	for i := range a.limbs {
		a.limbs[i] += bl[i]
	}
	a.normalize()
}

// Reset empties a.
func (a *Acc) Reset() {
	*a = Acc{}
}

// normalize propagates a's carries and restarts its count of Adds.
func (a *Acc) normalize() {
	normalizeLimbs(&a.limbs)
	a.n = 0
}

// normalizeLimbs propagates carries so that every limb but the top one lies
// in [0, 2^32), without changing the value. The result is the unique
// normalised form of the value, so equal sums give equal limbs.
func normalizeLimbs(l *[nLimbs]int64) {
	var c int64
	for i := range top {
		v := l[i] + c
		l[i] = v & mask32
		c = v >> 32 // arithmetic shift: floor division by 2^32
	}
	l[top] += c
}

// Float64 returns the exact sum correctly rounded to the nearest float64,
// ties to even; a sum too large in magnitude gives ±Inf. An exact sum of
// zero, including a sum of only -0 values, gives +0. If NaN, or both +Inf
// and -Inf, were added it returns NaN; otherwise if an infinity was added,
// that infinity.
func (a *Acc) Float64() float64 {
	switch {
	case a.flags&flagNaN != 0, a.flags&(flagPosInf|flagNegInf) == flagPosInf|flagNegInf:
		return math.NaN()
	case a.flags&flagPosInf != 0:
		return math.Inf(1)
	case a.flags&flagNegInf != 0:
		return math.Inf(-1)
	}
	l := a.limbs
	normalizeLimbs(&l)
	neg := l[top] < 0
	if neg {
		// Negate the value limb by limb, then restore the normal form: the
		// top limb of a positive value is >= 0.
		for i := range l {
			l[i] = -l[i]
		}
		normalizeLimbs(&l)
	}
	// The magnitude as a big-endian integer: the top limb (up to 63 bits)
	// in 8 bytes, the others in 4 each.
	var buf [8 + 4*top]byte
	binary.BigEndian.PutUint64(buf[:8], uint64(l[top]))
	for i := range top {
		binary.BigEndian.PutUint32(buf[8+4*(top-1-i):], uint32(l[i]))
	}
	var z big.Int
	z.SetBytes(buf[:])
	if z.Sign() == 0 {
		return 0
	}
	// SetInt takes the precision of z, so f is exact; the scaling by
	// 2^limbExp is exact too. big.Float.Float64 rounds once to the float64
	// precision available at f's exponent (fewer bits for subnormals), with
	// ties to even, and gives ±Inf beyond MaxFloat64.
	var f big.Float
	f.SetInt(&z)
	f.SetMantExp(&f, limbExp)
	r, _ := f.Float64()
	if neg {
		r = -r
	}
	return r
}

// encodingVersion is the first byte of the encoding of an Acc.
const encodingVersion = 1

// encodedLen is the length of every MarshalBinary encoding.
const encodedLen = 2 + 8*nLimbs

// MarshalBinary encodes a in a fixed 546 bytes: a version byte, a byte of
// NaN/Inf flags, then the normalised limbs, least significant first, as
// little-endian int64s. Equal sums give equal encodings.
func (a *Acc) MarshalBinary() ([]byte, error) {
	l := a.limbs
	normalizeLimbs(&l)
	out := make([]byte, encodedLen)
	out[0] = encodingVersion
	out[1] = a.flags
	for i, v := range l {
		binary.LittleEndian.PutUint64(out[2+8*i:], uint64(v))
	}
	return out, nil
}

// UnmarshalBinary sets a to the accumulator encoded in b by MarshalBinary.
// It refuses, leaving a unchanged, a b of the wrong length or version,
// unknown flags, or limbs that are not in normal form.
func (a *Acc) UnmarshalBinary(b []byte) error {
	if len(b) != encodedLen {
		return fmt.Errorf("exactsum: UnmarshalBinary: encoding is %d bytes, want %d", len(b), encodedLen)
	}
	if b[0] != encodingVersion {
		return fmt.Errorf("exactsum: UnmarshalBinary: encoding version %d, want %d", b[0], encodingVersion)
	}
	if b[1]&^flagsAll != 0 {
		return fmt.Errorf("exactsum: UnmarshalBinary: unknown flags %#x", b[1])
	}
	var l [nLimbs]int64
	for i := range l {
		l[i] = int64(binary.LittleEndian.Uint64(b[2+8*i:]))
		if i < top && uint64(l[i]) > mask32 {
			return fmt.Errorf("exactsum: UnmarshalBinary: limb %d is %#x, not in [0, 2^32)", i, uint64(l[i]))
		}
	}
	*a = Acc{limbs: l, flags: b[1]}
	return nil
}

// Sum returns the exact global sum of every rank's a, correctly rounded as
// by Float64; every rank gets the same bits. It is a collective: every rank
// of c must call it, in the same order as its other collectives. A nil a
// counts as an empty accumulator. a is not modified.
func Sum(c comm.Comm, a *Acc) (float64, error) {
	if a == nil {
		a = new(Acc)
	}
	mine, err := a.MarshalBinary()
	if err != nil {
		return 0, fmt.Errorf("exactsum: Sum on rank %d: %w", c.Rank(), err)
	}
	all, err := c.Gatherv(mine, 0)
	if err != nil {
		return 0, fmt.Errorf("exactsum: Sum on rank %d: gathering the accumulators: %w", c.Rank(), err)
	}
	// msg is what rank 0 broadcasts: 1 and the result's bits, or 0 if it
	// could not decode a rank's accumulator, so that every rank still meets
	// the Bcast and then fails alike.
	var msg [9]byte
	var rootErr error
	if c.Rank() == 0 {
		var total, part Acc
		for r, enc := range all {
			if err := part.UnmarshalBinary(enc); err != nil {
				rootErr = fmt.Errorf("exactsum: Sum on rank 0: accumulator of rank %d: %w", r, err)
				break
			}
			total.Merge(&part)
		}
		if rootErr == nil {
			msg[0] = 1
			binary.LittleEndian.PutUint64(msg[1:], math.Float64bits(total.Float64()))
		}
	}
	if err := c.Bcast(msg[:], 0); err != nil {
		return 0, fmt.Errorf("exactsum: Sum on rank %d: broadcasting the result: %w", c.Rank(), err)
	}
	if msg[0] != 1 {
		if rootErr != nil {
			return 0, rootErr
		}
		return 0, fmt.Errorf("exactsum: Sum on rank %d: %w", c.Rank(), errRootFailed)
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(msg[1:])), nil
}

// errRootFailed is what ranks other than 0 return when rank 0 could not
// decode the gathered accumulators.
var errRootFailed = errors.New("rank 0 could not decode the gathered accumulators")

// SumAll is Sum of several accumulators in one collective: their exact
// global sums, in order, the same bits on every rank (one gather and one
// broadcast however many, for iterations that need a few sums a step).
func SumAll(c comm.Comm, accs []*Acc) ([]float64, error) {
	var mine []byte
	for _, a := range accs {
		enc, err := a.MarshalBinary()
		if err != nil {
			return nil, fmt.Errorf("exactsum: SumAll on rank %d: %w", c.Rank(), err)
		}
		mine = binary.LittleEndian.AppendUint32(mine, uint32(len(enc)))
		mine = append(mine, enc...)
	}
	all, err := c.Gatherv(mine, 0)
	if err != nil {
		return nil, fmt.Errorf("exactsum: SumAll on rank %d: gathering the accumulators: %w", c.Rank(), err)
	}
	// What rank 0 broadcasts: 1 and the results' bits, or 0 when it could
	// not decode a rank's accumulators (every rank then fails alike).
	msg := make([]byte, 1+8*len(accs))
	var rootErr error
	if c.Rank() == 0 {
		totals := make([]Acc, len(accs))
		for r, enc := range all {
			for i := range accs {
				var part Acc
				if len(enc) < 4 || len(enc) < 4+int(binary.LittleEndian.Uint32(enc)) {
					rootErr = fmt.Errorf("exactsum: SumAll on rank 0: accumulator %d of rank %d is cut short", i, r)
					break
				}
				n := int(binary.LittleEndian.Uint32(enc))
				if err := part.UnmarshalBinary(enc[4 : 4+n]); err != nil {
					rootErr = fmt.Errorf("exactsum: SumAll on rank 0: accumulator %d of rank %d: %w", i, r, err)
					break
				}
				enc = enc[4+n:]
				totals[i].Merge(&part)
			}
			if rootErr != nil {
				break
			}
		}
		if rootErr == nil {
			msg[0] = 1
			for i := range totals {
				binary.LittleEndian.PutUint64(msg[1+8*i:], math.Float64bits(totals[i].Float64()))
			}
		}
	}
	if err := c.Bcast(msg, 0); err != nil {
		return nil, fmt.Errorf("exactsum: SumAll on rank %d: broadcasting the results: %w", c.Rank(), err)
	}
	if msg[0] != 1 {
		if rootErr != nil {
			return nil, rootErr
		}
		return nil, fmt.Errorf("exactsum: SumAll on rank %d: %w", c.Rank(), errRootFailed)
	}
	out := make([]float64, len(accs))
	for i := range out {
		out[i] = math.Float64frombits(binary.LittleEndian.Uint64(msg[1+8*i:]))
	}
	return out, nil
}
