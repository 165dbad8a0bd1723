package claude

import (
	"testing"

	"github.com/twasm/twasm/abi/sdk"
)

// TestUsageArithmetic pins minus, positive and add figure by figure (each
// of the six counters, set or unset, and the tier), which close and
// result use to split a message's usage between steps.
func TestUsageArithmetic(t *testing.T) {
	full := func(a, b, c, d, e, f int64, tier string) usage {
		return usage{in: sdk.N(a), cacheWrite: sdk.N(b), cacheRead: sdk.N(c), out: sdk.N(d), reasoning: sdk.N(e), cacheWrite1h: sdk.N(f), tier: tier}
	}
	for _, tc := range []struct {
		name string
		got  usage
		want usage
	}{
		{"minus every figure", full(10, 20, 30, 40, 50, 60, "priority").minus(full(1, 2, 3, 4, 5, 6, "standard")),
			full(9, 18, 27, 36, 45, 54, "priority")},
		{"minus keeps a figure u lacks unset", usage{in: sdk.N(5), tier: "t"}.minus(full(1, 2, 3, 4, 5, 6, "")),
			usage{in: sdk.N(4), tier: "t"}},
		{"minus of an unset figure of o", usage{out: sdk.N(7)}.minus(usage{}), usage{out: sdk.N(7)}},
		{"minus can go below zero", usage{out: sdk.N(1)}.minus(usage{out: sdk.N(3)}), usage{out: sdk.N(-2)}},
		{"positive drops zero, negative and unset", full(-1, 0, 3, -4, 5, 0, "x").positive(),
			usage{cacheRead: sdk.N(3), reasoning: sdk.N(5), tier: "x"}},
		{"add sums set figures", func() usage {
			u := full(1, 2, 3, 4, 5, 6, "standard")
			u.add(full(10, 20, 30, 40, 50, 60, "standard"))
			return u
		}(), full(11, 22, 33, 44, 55, 66, "standard")},
		{"add to unset figures takes o's", func() usage {
			var u usage
			u.add(usage{in: sdk.N(3), out: sdk.N(4), tier: "priority"})
			return u
		}(), usage{in: sdk.N(3), out: sdk.N(4), tier: "priority"}},
		{"add of nothing keeps u", func() usage {
			u := usage{cacheRead: sdk.N(9), tier: "standard"}
			u.add(usage{})
			return u
		}(), usage{cacheRead: sdk.N(9), tier: "standard"}},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.name, tc.got, tc.want)
		}
	}
}
