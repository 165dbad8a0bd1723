package wire_test

import (
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/twasm/twasm/internal/wire"
)

// checkFloat compares wire.ParseFloat with strconv.ParseFloat on s, which
// is a JSON number or not: the bits must agree (the sign of zero and the
// infinity of an overflow included) and ok must mean strconv's nil error.
func checkFloat(t *testing.T, s string) {
	t.Helper()
	got, ok := wire.ParseFloat([]byte(s))
	if !isJSONNumber(s) {
		if ok {
			t.Fatalf("%q is not a JSON number but parsed as %v", s, got)
		}
		return
	}
	want, err := strconv.ParseFloat(s, 64)
	if ok != (err == nil) || math.Float64bits(got) != math.Float64bits(want) {
		t.Fatalf("%q: got %v (%x) ok %v, strconv %v (%x) err %v", s, got, math.Float64bits(got), ok, want, math.Float64bits(want), err)
	}
}

// isJSONNumber is the RFC 8259 grammar, written out independently of the
// tape's scanner.
func isJSONNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			n++
		}
		return n
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}

func TestParseFloat(t *testing.T) {
	for _, s := range []string{
		"0", "-0", "0.0", "-0.0", "0e5", "-0E-5", "1", "-1", "12.5", "0.1", "0.3", "1e22", "1e23", "9007199254740993",
		"0.11923074999999999", "0.07291935", "123456789012345678901234567890", "1.7976931348623157e308",
		"1.7976931348623158e308", "1.7976931348623159e308", "1e309", "-1e309", "1e400", "4.9e-324", "2.4703282292062327e-324",
		"2.4703282292062328e-324", "2.47e-324", "1e-400", "-1e-400", "2.2250738585072011e-308", "2.2250738585072012e-308",
		"2.225073858507201136057409796709131975934819546351645648e-308", "1e999999999999999999", "1e-999999999999999999",
		"0.000000000000000000000000000000000000000001", "100000000000000000000000000000000000000000e-30",
		"3.0", "3.00000000000000000001", "9223372036854775807", "9223372036854775808", "-9223372036854775809",
		// Not JSON numbers: refused (strconv accepts some of them).
		"", "-", "+1", ".5", "1.", "01", "1e", "1e+", "Inf", "NaN", "0x10", "1_000", " 1", "1 ",
	} {
		checkFloat(t, s)
	}
}

// TestParseFloatRandom checks the shapes that reach the exact path: the
// shortest form of random float64s (up to 17 digits), the exact halfway
// points between neighbours and the decimals just beside them, long
// digit strings.
func TestParseFloatRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 4000 {
		f := math.Float64frombits(r.Uint64())
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		checkFloat(t, strconv.FormatFloat(f, 'g', -1, 64))
		checkFloat(t, strconv.FormatFloat(f, 'e', 25, 64))
		checkFloat(t, strconv.FormatFloat(f, 'f', -1, 64))
	}
	for range 400 {
		// Small magnitudes and denormals, where the rounding has
		// fewer than 53 bits.
		f := math.Float64frombits(r.Uint64N(1 << 54))
		checkFloat(t, strconv.FormatFloat(f, 'g', -1, 64))
		checkHalfway(t, f)
		checkHalfway(t, math.Float64frombits(r.Uint64()&^(1<<63)>>1+1<<61))
	}
	for range 1000 {
		n := 1 + r.IntN(60)
		b := make([]byte, 0, n+8)
		b = append(b, byte('1'+r.IntN(9)))
		for range n {
			b = append(b, byte('0'+r.IntN(10)))
		}
		b = append(b, 'e')
		b = strconv.AppendInt(b, int64(r.IntN(700)-350), 10)
		checkFloat(t, string(b))
	}
}

// checkHalfway checks the exact decimal of the point halfway between f and
// its upper neighbour (a tie: rounds to the even one), and that point
// plus and minus a tiny amount.
func checkHalfway(t *testing.T, f float64) {
	t.Helper()
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return
	}
	lo := new(big.Float).SetPrec(2000).SetFloat64(f)
	hi := new(big.Float).SetPrec(2000).SetFloat64(math.Nextafter(f, math.Inf(1)))
	mid := new(big.Float).SetPrec(2000).Add(lo, hi)
	mid.Quo(mid, big.NewFloat(2))
	s := mid.Text('e', 1100)
	checkFloat(t, trimMantissa(s))
	eps := new(big.Float).SetPrec(2000).SetMantExp(big.NewFloat(1), mid.MantExp(nil)-1200)
	checkFloat(t, trimMantissa(new(big.Float).SetPrec(2000).Add(mid, eps).Text('e', 1100)))
	checkFloat(t, trimMantissa(new(big.Float).SetPrec(2000).Sub(mid, eps).Text('e', 1100)))
}

// trimMantissa drops the trailing zeros of a mantissa ("1.500e+00" →
// "1.5e+00"; "2.000e+00" → "2e+00").
func trimMantissa(s string) string {
	e := len(s)
	for i := range s {
		if s[i] == 'e' {
			e = i
			break
		}
	}
	m := e
	for m > 0 && s[m-1] == '0' {
		m--
	}
	if m > 0 && s[m-1] == '.' {
		m--
	}
	return s[:m] + s[e:]
}

func TestParseInt(t *testing.T) {
	for _, s := range []string{
		"0", "-0", "+0", "7", "-7", "+7", "007", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
		"-9223372036854775809", "18446744073709551616", "99999999999999999999", "", "+", "-", "1.0", "1e3", " 1", "1_0", "0x1",
	} {
		checkInt(t, s)
	}
}

func checkInt(t *testing.T, s string) {
	t.Helper()
	got, ok := wire.ParseInt([]byte(s))
	want, err := strconv.ParseInt(s, 10, 64)
	if ok != (err == nil) || ok && got != want {
		t.Fatalf("%q: got %d ok %v, strconv %d err %v", s, got, ok, want, err)
	}
}

func FuzzParseFloat(f *testing.F) {
	for _, s := range []string{"0", "-0.5", "1e23", "0.11923074999999999", "2.4703282292062328e-324", "1e309", "01", "+1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkFloat(t, s)
	})
}

func FuzzParseInt(f *testing.F) {
	for _, s := range []string{"0", "-7", "+7", "9223372036854775808", "1.0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkInt(t, s)
	})
}
