package wire

import (
	"math"
	"math/bits"
)

// ParseInt and ParseFloat read numbers for the plugins (package abi's
// Value.Int and Value.Float) exactly as strconv.ParseInt(s, 10, 64) and
// strconv.ParseFloat(s, 64) do when these return no error, and report
// false where those return one. They exist so that a plugin links no
// strconv parser: strconv's errors are compared as interface values of a
// non-pointer type, which inside a TinyGo module links reflection, every
// error type's Error method and strconv.Quote; with ParseFloat's
// Eisel-Lemire tables that was a quarter of a bundled module (about 40 KB
// of 180), all of it decoded and validated by the host at every start.
// Both only read: nothing is allocated on the common paths.

// ParseInt returns the base-10 integer in b: an optional sign (+ or -) and
// one or more decimal digits, within int64. It is strconv.ParseInt(s, 10,
// 64) with ok meaning a nil error.
func ParseInt(b []byte) (n int64, ok bool) {
	neg := false
	if len(b) > 0 && (b[0] == '+' || b[0] == '-') {
		neg = b[0] == '-'
		b = b[1:]
	}
	if len(b) == 0 {
		return 0, false
	}
	const limit = 1 << 63
	var u uint64
	for _, c := range b {
		if c < '0' || c > '9' || u > limit/10 {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
		if u > limit {
			return 0, false
		}
	}
	if neg {
		return -int64(u), true // -(1<<63) wraps to itself: MinInt64
	}
	if u == limit {
		return 0, false
	}
	return int64(u), true
}

// ParseFloat returns the float64 nearest to the JSON number in b (RFC
// 8259: what a tape's number token holds), ties to even: strconv.ParseFloat
// (s, 64) with ok meaning a nil error. A magnitude that rounds beyond the
// largest float64 returns ±Inf and false, as strconv's range error does;
// one that rounds below the smallest returns ±0 and true. Text that is not
// a JSON number returns false (strconv also accepts "Inf", hexadecimal,
// "+1", ".5" and "1.", which no tape holds).
func ParseFloat(b []byte) (float64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	if end, ok := number(b, 0); !ok || end != len(b) {
		return 0, false
	}
	neg := b[0] == '-'
	// The first 19 significant digits fit a uint64: the common case
	// (a token count, a cost) is one exact float operation.
	mant, _, _, exp, trunc := decimal(b, false)
	if mant == 0 {
		return signed(0, neg), true
	}
	if !trunc && mant < 1<<53 && exp >= -22 && exp <= 22 {
		// Both operands are exact, so IEEE's one rounding is the
		// correct one (Clinger's fast path).
		f := float64(mant)
		p := 1.0
		for k := exp; k != 0; {
			p *= 10 // exact up to 1e22
			if k > 0 {
				k--
			} else {
				k++
			}
		}
		if exp < 0 {
			f /= p
		} else {
			f *= p
		}
		return signed(f, neg), true
	}
	return parseSlow(b, neg)
}

// decimal reads the JSON number in b as digits·10^exp: the first 19
// significant digits into mant, or with exact the first maxDigits into
// n; nd counts the digits read, trunc reports a non-zero one left out.
func decimal(b []byte, exact bool) (mant uint64, n nat, nd, exp int, trunc bool) {
	i := 0
	if b[0] == '-' {
		i = 1
	}
	frac := false
	for ; i < len(b) && b[i] != 'e' && b[i] != 'E'; i++ {
		c := b[i]
		if c == '.' {
			frac = true
			continue
		}
		if frac {
			exp--
		}
		switch {
		case nd == 0 && c == '0': // a leading zero
		case exact && nd < maxDigits:
			n = n.mulAdd(10, uint32(c-'0'))
			nd++
		case !exact && nd < 19:
			mant = mant*10 + uint64(c-'0')
			nd++
		default:
			exp++
			trunc = trunc || c != '0'
		}
	}
	return mant, n, nd, exp + exponent(b, i), trunc
}

// exponent returns the value of the exponent part at b[i:] ("e-12"; 0 when
// there is none), kept within ±1e6: anything beyond is out of range anyway.
func exponent(b []byte, i int) int {
	if i >= len(b) {
		return 0
	}
	i++ // e or E
	neg := b[i] == '-'
	if b[i] == '-' || b[i] == '+' {
		i++
	}
	e := 0
	for ; i < len(b); i++ {
		if e < 1e6 {
			e = e*10 + int(b[i]-'0')
		}
	}
	if neg {
		return -e
	}
	return e
}

func signed(f float64, neg bool) float64 {
	if neg {
		return -f
	}
	return f
}

// maxDigits significant digits decide the rounding of any float64: a
// halfway point between two of them has at most 767, so digits past 800
// only matter as "something follows" (the sticky bit).
const maxDigits = 800

// parseSlow rounds the decimal in b exactly with big integers: the value
// is N·10^exp, written as the fraction A/B; the 64 leading bits of A/B and
// whether a remainder is left decide the rounding. Reached for a mantissa
// of 2^53 or more (JavaScript's shortest form of a cost often has 17
// digits) or an exponent beyond ±22.
func parseSlow(b []byte, neg bool) (float64, bool) {
	_, n, nd, exp, sticky := decimal(b, true)
	// The value lies in [10^(nd+exp-1), 10^(nd+exp)).
	switch mag := nd + exp; {
	case mag > 310: // beyond 1.8e308 whatever the digits
		return signed(math.Inf(1), neg), false
	case mag < -330: // below half the smallest denormal (4.9e-324)
		return signed(0, neg), true
	}
	a, d := n, nat{1}
	for ; exp > 0; exp-- {
		a = a.mulAdd(10, 0)
	}
	for ; exp < 0; exp++ {
		d = d.mulAdd(10, 0)
	}
	// q = floor(a·2^s / d) has 63 or 64 bits.
	s := 63 - (a.bitLen() - d.bitLen())
	if s > 0 {
		a = a.shl(uint(s))
	} else {
		d = d.shl(uint(-s))
	}
	d = d.shl(63)
	var q uint64
	for k := 63; k >= 0; k-- {
		if a.cmp(d) >= 0 {
			a = a.sub(d)
			q |= 1 << k
		}
		d = d.shr1()
	}
	sticky = sticky || len(a) > 0
	// The value is (q + a fraction) · 2^-s; its leading bit weighs
	// 2^e2. Round to 53 bits, or fewer for a denormal, whose last bit
	// weighs 2^-1074.
	e2 := bits.Len64(q) - 1 - s
	lsb := max(e2-52, -1074)
	drop := lsb + s
	var m, rest, half uint64
	switch {
	case drop > 64:
		return signed(0, neg), true // below half the smallest denormal
	case drop == 64:
		rest, half = q, 1<<63
	default:
		m, rest, half = q>>drop, q&(1<<drop-1), 1<<(drop-1)
	}
	if rest > half || rest == half && (sticky || m&1 == 1) {
		m++
		if m == 1<<53 {
			m >>= 1
			lsb++
		}
	}
	if m < 1<<52 { // denormal (lsb is -1074) or zero
		return signed(math.Float64frombits(m), neg), true
	}
	if lsb+52 > 1023 {
		return signed(math.Inf(1), neg), false
	}
	return signed(math.Float64frombits(uint64(lsb+1075)<<52|m&(1<<52-1)), neg), true
}

// nat is a non-negative integer, 32-bit limbs, least significant first,
// with no leading zero limb (zero is empty).
type nat []uint32

func (x nat) mulAdd(m, c uint32) nat {
	carry := uint64(c)
	for i, l := range x {
		t := uint64(l)*uint64(m) + carry
		x[i] = uint32(t)
		carry = t >> 32
	}
	if carry != 0 {
		x = append(x, uint32(carry))
	}
	return x
}

func (x nat) bitLen() int {
	if len(x) == 0 {
		return 0
	}
	return (len(x)-1)*32 + bits.Len32(x[len(x)-1])
}

func (x nat) shl(k uint) nat {
	if len(x) == 0 {
		return x
	}
	words, s := int(k/32), k%32
	z := make(nat, len(x)+words+1)
	for i, l := range x {
		v := uint64(l) << s
		z[i+words] |= uint32(v)
		z[i+words+1] = uint32(v >> 32)
	}
	return z.norm()
}

func (x nat) shr1() nat {
	for i := range x {
		x[i] >>= 1
		if i+1 < len(x) {
			x[i] |= x[i+1] << 31
		}
	}
	return x.norm()
}

func (x nat) cmp(y nat) int {
	if len(x) != len(y) {
		if len(x) < len(y) {
			return -1
		}
		return 1
	}
	for i := len(x) - 1; i >= 0; i-- {
		if x[i] != y[i] {
			if x[i] < y[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}

// sub returns x-y for x >= y, in x's storage.
func (x nat) sub(y nat) nat {
	var borrow uint32
	for i := range x {
		var yi uint32
		if i < len(y) {
			yi = y[i]
		}
		x[i], borrow = bits.Sub32(x[i], yi, borrow)
	}
	return x.norm()
}

func (x nat) norm() nat {
	for len(x) > 0 && x[len(x)-1] == 0 {
		x = x[:len(x)-1]
	}
	return x
}
